// The fault drill of S3: a region on a MinIO of this file's own is down when a tenant asks for its storage, and
// stays down longer than the activity's ordinary attempts last (five, about 15 s). Provisioning waits with backoff
// and finishes once MinIO is back: every bucket ready, each in MinIO and this tenant's, nothing else left there,
// storage.provisioned published once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { s3For } from '../../api/storage/s3'
import { freePort, startMinio, type MinioServer } from '../../scripts/platform'
import { useApiAndWorker } from '../support/api-and-worker'
import { tenantOwner } from '../support/fixtures'
import { bucketsIn } from './helpers'

const OUTAGE_MS = 20_000

let minio: MinioServer
const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'minio-drill-'))
const ports = { port: await freePort(), consolePort: await freePort() }
const startOwnMinio = () => startMinio({ dataDir: dir, ...ports, logFile: join(dir, 'minio.log') })

beforeAll(async () => {
  minio = await startOwnMinio()
})
const env = useApiAndWorker('drill', () => ({
  WORKER_TASK_QUEUES: 'storage',
  STORAGE_REGIONS: JSON.stringify([{ id: 'drill', name: 'Drill', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey }]),
}))
afterAll(async () => {
  await minio?.stop()
})

describe('MinIO down during bucket provisioning', () => {
  test('the workflow waits with backoff and finishes when MinIO returns: no failure, no orphan, one announcement', async () => {
    const { api } = env
    const owner = await tenantOwner(api.url)
    await minio.stop()
    const put = await owner.client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'drill' } })
    expect(put.status).toBe(200)
    await Bun.sleep(OUTAGE_MS)
    const during = (await owner.client.get('/tenants/current/storage-bucket')).json.data
    expect(Object.values(during).map((b: any) => b.status)).toEqual(['provisioning', 'provisioning', 'provisioning'])

    minio = await startOwnMinio()
    const returnedAt = performance.now()
    const ready = await bucketsIn(owner.client, 'ready', 60_000)
    console.error(`[drill] MinIO down ${OUTAGE_MS / 1000} s; buckets ready ${Math.round((performance.now() - returnedAt) / 100) / 10} s after it returned`)

    const s3 = s3For({ id: 'drill', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })
    const names = Object.values(ready)
      .map((b) => b!.name)
      .sort()
    expect((await s3.listBuckets()).map((b) => b.name).sort()).toEqual(names)
    for (const name of names) {
      const tags = Object.fromEntries((await s3.getBucketTagging(name)).map((t) => [t.Key, t.Value]))
      expect(tags['rcp-tenant']).toBe(owner.tenantId)
    }
    const [announced] = await api.sql<
      { n: number }[]
    >`select count(*)::int as n from events where tenant_id = ${owner.tenantId} and type = 'storage.provisioned'`
    expect(announced!.n).toBe(1)
  }, 120_000)
})
