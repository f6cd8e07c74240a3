// A second region on its own MinIO, served by a worker and an API started here on their own task-queue
// prefix, so stopping that MinIO touches nothing the other tests use.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../api/platform/config'
import { s3For } from '../../api/storage/s3'
import { startWorker, type RunningWorker } from '../../worker/run'
import { freePort, startMinio, type MinioServer } from '../../scripts/platform'
import { startApi, type TestApi } from '../support/api'
import { bucketsIn, jobDone, localS3, provisionedTenant } from './helpers'

let minio: MinioServer
let api: TestApi
let worker: RunningWorker | undefined
let overrides: Record<string, string>
const JOBS = '/tenants/current/storage-reconciliation-jobs'

const startTestWorker = async () => {
  worker = await startWorker(loadConfig({ ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', WORKER_TASK_QUEUES: 'storage', ...overrides }), {
    schedules: false,
  })
}

beforeAll(async () => {
  const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'minio-edge-'))
  minio = await startMinio({ dataDir: dir, port: await freePort(), consolePort: await freePort(), logFile: join(dir, 'minio.log') })
  overrides = {
    TEMPORAL_TASK_QUEUE_PREFIX: `rcp-edge-${crypto.randomUUID().slice(0, 8)}`,
    STORAGE_REGIONS: JSON.stringify([{ id: 'edge', name: 'Edge', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey }]),
  }
  api = await startApi(overrides)
  await startTestWorker()
}, 120_000) // a MinIO, an API and a worker (webpack-bundled workflows), beside the other files' work
afterAll(async () => {
  await worker?.shutdown()
  await api.stop()
  await minio.stop()
})

describe('a region whose S3 endpoint goes away', () => {
  test('buckets live in the chosen region; once it is down, reconciliation is refused or fails with the provider code', async () => {
    const tenant = await provisionedTenant(api.url, 'edge')
    const edge = s3For({ id: 'edge', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })
    expect(await edge.bucketExists(tenant.buckets.bucket!.name)).toBe(true)
    expect(await localS3().bucketExists(tenant.buckets.bucket!.name)).toBe(false)
    await edge.putObject(tenant.buckets.bucket!.name, 'k', Buffer.from('v'))

    // Accepted while the endpoint answers, but no worker picks it up before the endpoint is gone.
    await worker!.shutdown()
    const queued = await tenant.billing.post(JOBS, {})
    expect(queued.status).toBe(201)
    expect(queued.json.data.job.status).toBe('queued')
    await minio.stop()

    const refused = await tenant.billing.post(JOBS, { dryRun: true })
    expect([refused.status, refused.json.code]).toEqual([409, 'RECONCILIATION_ALREADY_RUNNING'])
    const summary = await tenant.client.get('/tenants/current/storage-summary?refresh=true')
    expect([summary.status, summary.json.code]).toEqual([503, 'SERVICE_UNAVAILABLE'])
    expect(summary.text).not.toContain(minio.endpoint)

    await startTestWorker()
    const failed = await jobDone(tenant.billing, queued.json.data.job.id, 50_000)
    expect(failed).toMatchObject({ status: 'failed', errorCode: 'STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE' })
    expect(failed.finishedAt).not.toBeNull()

    const down = await tenant.billing.post(JOBS, {})
    expect([down.status, down.json.code]).toEqual([400, 'STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE'])
    expect(down.text).not.toContain(minio.endpoint)
    await bucketsIn(tenant.client, 'ready')
  }, 120_000)
})
