// The fault drill of S3 during a package build: the tenant's storage is on a MinIO of this file's own, stopped while
// the archive is being uploaded and kept down longer than the archive activity's ordinary attempts last (five,
// about 15 s). The build waits with backoff and finishes once MinIO is back, with no half state: no incomplete
// multipart upload, exactly one artifact whose bytes have the recorded SHA-256, one edge_package.ready.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { s3For } from '../../api/storage/s3'
import { freePort, startMinio, type MinioServer } from '../../scripts/platform'
import { useApiAndWorker } from '../support/api-and-worker'
import { patFor } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { provisionedTenant } from '../storage/helpers'
import { makeProfile, makeVersion, packageIn } from './helpers'

const OUTAGE_MS = 25_000
const MODEL_BYTES = 192 * 1024 * 1024

let minio: MinioServer
const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'minio-build-drill-'))
const ports = { port: await freePort(), consolePort: await freePort() }
const startOwnMinio = () => startMinio({ dataDir: dir, ...ports, logFile: join(dir, 'minio.log') })
const s3 = () => s3For({ id: 'drill', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })

beforeAll(async () => {
  minio = await startOwnMinio()
})
const env = useApiAndWorker('build-drill', () => ({
  WORKER_TASK_QUEUES: 'storage,models,packages',
  STORAGE_REGIONS: JSON.stringify([{ id: 'drill', name: 'Drill', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey }]),
}))
afterAll(async () => {
  await minio?.stop()
})

const incompleteUploads = async (bucket: string) => {
  const found: string[] = []
  for await (const u of s3().listIncompleteUploads(bucket, '', true) as AsyncIterable<{ key: string; uploadId: string }>) found.push(`${u.key} ${u.uploadId}`)
  return found
}

describe('MinIO down during a package build', () => {
  test('the build waits with backoff and finishes when MinIO returns: no incomplete upload, one artifact, its SHA-256', async () => {
    const { api, worker } = env
    const owner = await provisionedTenant(api.url, 'drill')
    const models = owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write'])).token)
    const exportBucket = owner.buckets.exportBucket!.name
    const profileId = await makeProfile(api.sql, owner.tenantId)
    const version = await makeVersion(
      api.sql,
      owner.tenantId,
      owner.buckets.bucket!.name,
      { 'checkpoint.bin': MODEL_BYTES, 'config.json': Buffer.from('{}') },
      'ready',
      'model_bundle',
      { id: 'drill', s3: s3() },
    )
    const res = await models.post(`/model-versions/${version.id}/edge-inference-package`, { embodimentProfileId: profileId, mode: 'local' })
    expect(res.status).toBe(201)
    const id: string = res.json.data.id

    // Stopped with the upload under way: parts sent, the object not yet complete.
    await eventually('the upload to be under way', async () => ((await incompleteUploads(exportBucket)).length > 0 ? true : undefined), 60_000)
    await minio.stop()
    const downAt = performance.now()
    await Bun.sleep(OUTAGE_MS)
    const during = (await models.get(`/edge-inference-packages/${id}`)).json.data
    expect(during.status).toBe('building')

    minio = await startOwnMinio()
    const upAt = performance.now()
    const pkg = await packageIn(models, id, ['ready', 'failed'], 120_000)
    const readyS = (performance.now() - upAt) / 1000
    expect({ status: pkg.status, failure: pkg.failureReason ?? null }).toEqual({ status: 'ready', failure: null })

    const objects: { name: string; size: number }[] = []
    for await (const o of s3().listObjectsV2(exportBucket, '', true)) objects.push({ name: o.name!, size: o.size })
    const key = `edge-packages/${id}/cpu.tar.gz`
    expect(objects).toEqual([{ name: key, size: pkg.artifact.sizeBytes }])
    expect(await incompleteUploads(exportBucket)).toEqual([])
    const hash = createHash('sha256')
    for await (const chunk of await s3().getObject(exportBucket, key)) hash.update(chunk as Buffer)
    expect(hash.digest('hex')).toBe(pkg.artifact.sha256)
    const events = await api.sql<{ type: string }[]>`select type from events where tenant_id = ${owner.tenantId} and type like 'edge_package.%'`
    expect(events.map((e) => e.type)).toEqual(['edge_package.ready'])

    const history = await worker.client.workflow.getHandle(pkg.workflowId).fetchHistory()
    const attempts = Math.max(
      ...history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => Number(e.activityTaskStartedEventAttributes!.attempt)),
    )
    console.error(
      `[drill] MinIO down ${((upAt - downAt) / 1000).toFixed(1)} s mid-upload of a ${MODEL_BYTES / 1024 / 1024} MiB model; ` +
        `the package ready ${readyS.toFixed(1)} s after it returned, archive attempts ${attempts}, incomplete uploads left 0, artifacts 1, SHA-256 verified`,
    )
  }, 240_000)
})
