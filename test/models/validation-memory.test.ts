// Validation streams each object through SHA-256: a worker's peak memory must not grow with the object's size.
// Its own worker process (own task-queue prefix), so its peak resident set (VmHWM) is this validation's alone.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { spawnChild, type Child } from '../../scripts/platform'
import { localS3, useApiAndTemporal } from '../storage/helpers'
import { modelTenant, settled } from './support'

const prefix = `rcp-models-mem-${crypto.randomUUID().slice(0, 8)}`
const logDir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'models-worker-'))
const env = useApiAndTemporal({ TEMPORAL_TASK_QUEUE_PREFIX: prefix })
let worker: Child | undefined
afterAll(async () => {
  await worker?.stop()
})

const MiB = 1024 * 1024
const peakRssMiB = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

/** `mib` MiB of pseudo-random bytes, generated chunk by chunk, and their SHA-256. */
function bigObject(mib: number) {
  const chunk = Buffer.alloc(MiB)
  const hash = createHash('sha256')
  for (let i = 0; i < mib; i++) {
    chunk.fill(i % 251)
    chunk.writeUInt32LE(i, 0)
    hash.update(chunk)
  }
  const body = Readable.from(
    (function* () {
      for (let i = 0; i < mib; i++) {
        const c = Buffer.alloc(MiB, i % 251)
        c.writeUInt32LE(i, 0)
        yield c
      }
    })(),
  )
  return { body, sizeBytes: mib * MiB, sha256: hash.digest('hex') }
}

async function validate(t: Awaited<ReturnType<typeof modelTenant>>, key: string, mib: number) {
  const o = bigObject(mib)
  await localS3().putObject(t.general, key, o.body, o.sizeBytes)
  const v = (
    await t.pat.post('/model-versions', {
      name: key,
      format: 'onnx',
      source: { kind: 'imported_checkpoint', path: key, sizeBytes: o.sizeBytes, sha256: o.sha256 },
    })
  ).json.data
  expect((await t.pat.post(`/model-versions/${v.id}/validations`)).status).toBe(202)
  expect(await settled(t.pat, v.id)).toMatchObject({ status: 'ready', totalBytes: o.sizeBytes })
}

describe('validation memory', () => {
  // The first validations grow the heap to its working size; after that, five times the bytes must not move the peak.
  test('a 320 MiB checkpoint validates within 64 MiB of the peak memory a 64 MiB one needed', async () => {
    worker = spawnChild('models-worker', {
      cmd: [process.execPath, 'worker/main.ts'],
      env: { ...process.env, TEMPORAL_TASK_QUEUE_PREFIX: prefix, LOG_LEVEL: 'info', METRICS: 'false' }, // the runner's worker holds the scrape ports
      logFile: join(logDir, 'worker.log'),
      stopSignal: 'SIGKILL',
    })
    const t = await modelTenant(env.api.url)
    await validate(t, 'small/model.onnx', 4)
    const small = peakRssMiB(worker.pid)
    await validate(t, 'mid/model.onnx', 64)
    const before = peakRssMiB(worker.pid)
    await validate(t, 'big/model.onnx', 320)
    const after = peakRssMiB(worker.pid)
    console.log(`worker peak RSS: ${small.toFixed(0)} MiB after 4 MiB, ${before.toFixed(0)} MiB after 64 MiB, ${after.toFixed(0)} MiB after 320 MiB`)
    expect(after - before).toBeLessThan(64)
  }, 120_000)
})
