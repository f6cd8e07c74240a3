// Kills the worker process (SIGKILL) in the middle of a package build and starts another: the package ends ready,
// once, with one artifact, the interrupted multipart upload removed, and the same bytes a clean build gives.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { killableWorkers } from '../support/worker-process'
import { eventually } from '../support/temporal'
import { localS3, useApiAndTemporal } from '../storage/helpers'
import { makeProfile, makeVersion, modelTenant, packageIn } from './helpers'

const MODEL_BYTES = 320 * 1024 * 1024
const prefix = `rcp-pkgkill-${crypto.randomUUID().slice(0, 8)}`
const s3 = localS3()

const workers = killableWorkers('pkg-kill', { TEMPORAL_TASK_QUEUE_PREFIX: prefix, WORKER_TASK_QUEUES: 'storage,models,packages' })

const incompleteUploads = async (bucket: string, key: string) => {
  const found: string[] = []
  for await (const u of s3.listIncompleteUploads(bucket, key, true) as AsyncIterable<{ key: string; uploadId: string }>) found.push(u.uploadId)
  return found
}

const env = useApiAndTemporal({ TEMPORAL_TASK_QUEUE_PREFIX: prefix })

describe('a worker killed mid-build', () => {
  test('the next worker completes the package exactly once, leaving no orphan upload', async () => {
    const first = await workers.start('worker-1')
    const t = await modelTenant(env.api.url)
    const profileId = await makeProfile(env.api.sql, t.tenantId)
    const version = await makeVersion(env.api.sql, t.tenantId, t.general, { 'checkpoint.bin': MODEL_BYTES, 'config.json': Buffer.from('{}') })
    const res = await t.models.post(`/model-versions/${version.id}/edge-inference-package`, { embodimentProfileId: profileId, mode: 'local' })
    expect(res.status).toBe(201)
    const id: string = res.json.data.id
    const key = `edge-packages/${id}/cpu.tar.gz`

    // Under way: progress shown by GET, and at least one part of the upload sent.
    const midway = await eventually(
      'the build to be under way with parts uploaded',
      async () => {
        const pkg = (await t.models.get(`/edge-inference-packages/${id}`)).json.data
        return pkg.status === 'building' && pkg.progress.bytesDone > 0 && (await incompleteUploads(t.exportBucket, key)).length > 0 ? pkg : undefined
      },
      60_000,
    )
    await first.stop()
    expect(midway.progress.bytesDone).toBeLessThan(midway.progress.bytesTotal)
    expect(midway.progress.bytesTotal).toBe(MODEL_BYTES + 2)
    expect((await t.models.get(`/edge-inference-packages/${id}`)).json.data.status).toBe('building')
    expect(await incompleteUploads(t.exportBucket, key)).toHaveLength(1)

    const second = await workers.start('worker-2')
    const pkg = await packageIn(t.models, id, ['ready', 'failed'], 150_000)
    expect(pkg.status).toBe('ready')
    expect(await incompleteUploads(t.exportBucket, key)).toEqual([])
    const objects: { name: string; size: number }[] = []
    for await (const o of s3.listObjectsV2(t.exportBucket, 'edge-packages/', true)) objects.push({ name: o.name!, size: o.size })
    expect(objects).toEqual([{ name: key, size: pkg.artifact.sizeBytes }])
    const stat = await s3.statObject(t.exportBucket, key)
    expect(stat.size).toBe(pkg.artifact.sizeBytes)

    const events = await env.api.sql<{ type: string }[]>`select type from events where tenant_id = ${t.tenantId} and type like 'edge_package.%'`
    expect(events.map((e) => e.type)).toEqual(['edge_package.ready'])
    // One workflow run; the archive activity ran again after the kill and aborted the dead attempt's upload.
    const history = await env.t.client.workflow.getHandle(pkg.workflowId).fetchHistory()
    const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => Number(e.activityTaskStartedEventAttributes!.attempt))
    expect(Math.max(...attempts)).toBeGreaterThan(1)
    const resumed = readFileSync(second.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('resumes after an interrupted upload'))
      .map((l) => JSON.parse(l))
    expect(resumed).toHaveLength(1)
    expect(resumed[0].aborted).toBe(1)
    const archived = readFileSync(second.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('edge package archived'))
      .map((l) => JSON.parse(l))
    expect(archived.map((a) => a.sha256)).toEqual([pkg.artifact.sha256])
  }, 300_000)
})
