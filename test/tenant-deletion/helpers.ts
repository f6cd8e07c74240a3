// Shared by the tenant deletion tests: a tenant with something in every place the deletion must reach, and waits on
// a job's row (its owner's credentials die early in the job, so the row, not the API, is what a test watches).
import type { Client as S3Client } from 'minio'
import type { Db } from '../../api/platform/db'
import { tablesWithTenantId, type DeletionJobRow } from '../../api/tenant-deletion/queries'
import { RETAINED_TABLES } from '../../api/tenant-deletion/steps'
import type { Client } from '../support/client'
import { uniqueEmail } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { bucketsIn, upload } from '../storage/helpers'

/** Provisions the tenant's buckets and fills them: `general` objects in the general bucket, and in the versioned
 *  dataset bucket `dataset` objects written twice and one of them deleted (a delete marker): 2 × dataset + 1 entries. */
export async function filledStorage(owner: { client: Client }, s3: S3Client, counts = { general: 25, dataset: 5 }) {
  const put = await owner.client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local' } })
  if (put.status !== 200) throw new Error(`provisioning failed to start: ${put.status} ${put.text}`)
  const buckets = await bucketsIn(owner.client, 'ready', 90_000)
  const general = buckets.bucket!.name
  const dataset = buckets.datasetBucket!.name
  await upload(
    s3,
    general,
    Array.from({ length: counts.general }, (_, i) => `obj/${i}`),
  )
  const keys = Array.from({ length: counts.dataset }, (_, i) => `ds/${i}`)
  await upload(s3, dataset, keys, 'v1')
  await upload(s3, dataset, keys, 'v2')
  await s3.removeObject(dataset, keys[0]!)
  return { general, dataset, exportBucket: buckets.exportBucket!.name, objectVersions: { general: counts.general, dataset: counts.dataset * 2 + 1, export: 0 } }
}

/** Rows in tables the API reaches: an invitation, a project, a second token. */
export async function someRows(owner: { client: Client }) {
  for (const [path, body] of [
    ['/tenant-invitations', { email: uniqueEmail('invitee'), role: 'viewer' }],
    ['/projects', { name: 'Arm', slug: `arm-${crypto.randomUUID().slice(0, 6)}` }],
  ] as const) {
    const res = await owner.client.post(path, body)
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`)
  }
}

export async function jobRow(sql: Db, jobId: string): Promise<DeletionJobRow> {
  const [row] = await sql<DeletionJobRow[]>`select * from tenant_deletion_jobs where id = ${jobId}`
  return row!
}

export async function jobEnds(sql: Db, jobId: string, timeoutMs = 180_000): Promise<DeletionJobRow> {
  return eventually(
    `deletion job ${jobId} to end`,
    async () => {
      const row = await jobRow(sql, jobId)
      return ['succeeded', 'failed', 'blocked'].includes(row.status) ? row : undefined
    },
    timeoutMs,
  )
}

/** Rows of the tenant left in every table with a tenant_id column but the retained ones. */
export async function leftovers(sql: Db, tenantId: string): Promise<Record<string, number>> {
  const tables = await tablesWithTenantId(sql)
  const out: Record<string, number> = {}
  for (const { table_name } of tables) {
    if (table_name in RETAINED_TABLES) continue
    const [row] = await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from "${table_name}" where tenant_id = $1`, [tenantId])
    if (row!.n > 0) out[table_name] = row!.n
  }
  return out
}

/** The tenant as its offboarding leaves it: `offboarding`, with a request whose window has ended (`elapsed`) or ends
 *  in a day. (The offboarding itself is test/tenancy/offboarding.test.ts's; its window is at least a day.) */
export async function offboarded(sql: Db, tenantId: string, elapsed = true) {
  await sql`update tenants set lifecycle = 'offboarding' where id = ${tenantId}`
  await sql`
    insert into tenant_offboarding_requests (tenant_id, state, retention_days, window_ends_at, workflow_id)
    values (${tenantId}, ${elapsed ? 'window_elapsed' : 'open'}, 1, ${new Date(Date.now() + (elapsed ? -60_000 : 86_400_000))}, ${`tenant-offboarding/${tenantId}/test`})`
}
