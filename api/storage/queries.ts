import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import type { BucketKind } from './s3'

export interface BucketRow {
  tenant_id: string
  kind: BucketKind
  name: string
  region_id: string
  status: 'provisioning' | 'ready' | 'failed'
  versioning: boolean
  expire_days: number | null
  failure_reason: string | null
  created_at: Date
  updated_at: Date
}

export interface UsageRow {
  kind: BucketKind
  bucket: string
  object_count: number
  bytes: number
  computed_at: Date
}

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed'

export interface JobRow {
  id: string
  tenant_id: string
  status: JobStatus
  dry_run: boolean
  objects_scanned: number
  bytes_scanned: number
  orphan_count: number
  missing_count: number
  error_code: string | null
  error_message: string | null
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
  updated_at: Date
  cursor_at: string
}

export interface FindingRow {
  kind: 'orphan' | 'missing'
  bucket: string
  key: string
  size: number | null
}

export const listBuckets = (db: Db, tenantId: string) => db<BucketRow[]>`select * from storage_buckets where tenant_id = ${tenantId} order by kind`

export interface NewBucket {
  kind: BucketKind
  name: string
  versioning: boolean
  expireDays: number | null
}

/** (Re)starts provisioning: fresh rows, or failed ones reset. Rows another request already holds in another
 *  state are left alone, so the caller re-reads and decides. */
/** Concurrent requests of one tenant take turns: ON CONFLICT arbitrates only (tenant_id, kind), so two racing
 *  inserts of the same bucket would otherwise collide on the unique name and fail instead of joining. */
/** The kinds this call (re)started provisioning for: new, or failed before; none when all were already underway or ready. */
export async function upsertProvisioning(db: Db, tenantId: string, regionId: string, buckets: NewBucket[]): Promise<BucketKind[]> {
  await db`select pg_advisory_xact_lock(hashtext(${`storage-provision:${tenantId}`}))`
  const started: BucketKind[] = []
  for (const b of buckets) {
    const rows = await db<{ kind: BucketKind }[]>`
      insert into storage_buckets (tenant_id, kind, name, region_id, status, versioning, expire_days)
      values (${tenantId}, ${b.kind}, ${b.name}, ${regionId}, 'provisioning', ${b.versioning}, ${b.expireDays})
      on conflict (tenant_id, kind) do update
        set region_id = excluded.region_id, status = 'provisioning', failure_reason = null, created_at = now(), updated_at = now()
        where storage_buckets.status = 'failed'
      returning kind`
    started.push(...rows.map((r) => r.kind))
  }
  return started
}

/** Empty when the bucket was not provisioning (a retried activity finds it ready already). */
export const markBucketReady = (db: Db, tenantId: string, kind: BucketKind) =>
  db<
    { kind: BucketKind }[]
  >`update storage_buckets set status = 'ready', updated_at = now() where tenant_id = ${tenantId} and kind = ${kind} and status = 'provisioning' returning kind`

export const markBucketsFailed = (db: Db, tenantId: string, reason: string) =>
  db`update storage_buckets set status = 'failed', failure_reason = ${reason}, updated_at = now() where tenant_id = ${tenantId}`

export const readUsage = (db: Db, tenantId: string) =>
  db<UsageRow[]>`select kind, bucket, object_count, bytes, computed_at from storage_usage where tenant_id = ${tenantId} order by kind`

/** Every tenant's stored bytes as last computed (the storage summary), for the hourly storage meter. Text: a sum of
 *  bigints may pass 2^53. */
export const storedBytesByTenant = (db: Db) =>
  db<{ tenant_id: string; bytes: string }[]>`select tenant_id, sum(bytes)::text as bytes from storage_usage group by tenant_id order by tenant_id`

export async function replaceUsage(db: Db, tenantId: string, rows: { kind: string; bucket: string; objectCount: number; bytes: number }[], at: Date) {
  for (const r of rows) {
    await db`
      insert into storage_usage (tenant_id, kind, bucket, object_count, bytes, computed_at)
      values (${tenantId}, ${r.kind}, ${r.bucket}, ${r.objectCount}, ${r.bytes}, ${at})
      on conflict (tenant_id, kind) do update
        set bucket = excluded.bucket, object_count = excluded.object_count, bytes = excluded.bytes, computed_at = excluded.computed_at`
  }
}

const JOB_COLUMNS =
  'id, tenant_id, status, dry_run, objects_scanned, bytes_scanned, orphan_count, missing_count, error_code, error_message, created_at, started_at, finished_at, updated_at'

/** null when the tenant already has a queued or running job (the partial unique index decides). */
export async function insertJob(db: Db, j: { tenantId: string; dryRun: boolean; createdBy: string }): Promise<JobRow | null> {
  const [row] = await db<JobRow[]>`
    insert into storage_reconciliation_jobs (tenant_id, status, dry_run, created_by)
    values (${j.tenantId}, 'queued', ${j.dryRun}, ${j.createdBy})
    on conflict (tenant_id) where status in ('queued', 'running') do nothing
    returning ${db.unsafe(JOB_COLUMNS)}, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`
  return row ?? null
}

export async function findActiveJob(db: Db, tenantId: string): Promise<JobRow | undefined> {
  const [row] = await db<JobRow[]>`
    select ${db.unsafe(JOB_COLUMNS)}, '' as cursor_at from storage_reconciliation_jobs
     where tenant_id = ${tenantId} and status in ('queued', 'running')`
  return row
}

export async function findJob(db: Db, tenantId: string, jobId: string): Promise<JobRow | undefined> {
  const [row] = await db<JobRow[]>`
    select ${db.unsafe(JOB_COLUMNS)}, '' as cursor_at from storage_reconciliation_jobs where tenant_id = ${tenantId} and id = ${jobId}`
  return row
}

/** One tenant's jobs, newest first, keyset-paged on (created_at, id). */
export function listJobs(db: Db, tenantId: string, status: JobStatus | undefined, after: CreatedCursor | null, limit: number) {
  return db<JobRow[]>`
    select ${db.unsafe(JOB_COLUMNS)}, ${db.unsafe(CURSOR_AT)}
      from storage_reconciliation_jobs
     where tenant_id = ${tenantId}
       and (${status ?? null}::text is null or status = ${status ?? null}) ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

export const listFindings = (db: Db, tenantId: string, jobId: string, limit: number) =>
  db<FindingRow[]>`
    select kind, bucket, key, size from storage_reconciliation_findings
     where tenant_id = ${tenantId} and job_id = ${jobId} order by kind, bucket, key limit ${limit}`

/** queued → running; a retried activity finds it running already and carries on. */
export const markJobRunning = (db: Db, tenantId: string, jobId: string) =>
  db<{ id: string }[]>`
    update storage_reconciliation_jobs set status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
     where tenant_id = ${tenantId} and id = ${jobId} and status in ('queued', 'running') returning id`

export const recordJobProgress = (db: Db, tenantId: string, jobId: string, p: { objectsScanned: number; bytesScanned: number }) =>
  db`update storage_reconciliation_jobs set objects_scanned = ${p.objectsScanned}, bytes_scanned = ${p.bytesScanned}, updated_at = now()
      where tenant_id = ${tenantId} and id = ${jobId} and status = 'running'`

/** Counts come from the findings table itself, so findings written twice by a resumed attempt count once. */
export const finishJob = (db: Db, tenantId: string, jobId: string, p: { objectsScanned: number; bytesScanned: number }) =>
  db<{ orphan_count: number; missing_count: number }[]>`
    update storage_reconciliation_jobs j
       set status = 'succeeded', objects_scanned = ${p.objectsScanned}, bytes_scanned = ${p.bytesScanned},
           orphan_count = (select count(*) from storage_reconciliation_findings f where f.job_id = j.id and f.kind = 'orphan'),
           missing_count = (select count(*) from storage_reconciliation_findings f where f.job_id = j.id and f.kind = 'missing'),
           finished_at = now(), updated_at = now()
     where tenant_id = ${tenantId} and id = ${jobId} and status in ('queued', 'running')
    returning orphan_count, missing_count`

/** Empty when the job had already ended. */
export const failJob = (db: Db, tenantId: string, jobId: string, code: string, message: string) =>
  db<
    { objects_scanned: number }[]
  >`update storage_reconciliation_jobs set status = 'failed', error_code = ${code}, error_message = ${message}, finished_at = now(), updated_at = now()
      where tenant_id = ${tenantId} and id = ${jobId} and status in ('queued', 'running') returning objects_scanned`

/** Expected keys of one bucket in (after, upTo]; upTo null means to the end. Byte order, as S3 lists. */
export const expectedKeys = (db: Db, tenantId: string, bucket: string, after: string | null, upTo: string | null) =>
  db<{ key: string }[]>`
    select key from storage_expected_objects
     where tenant_id = ${tenantId} and bucket = ${bucket}
       and (${after}::text is null or key > ${after}::text collate "C")
       and (${upTo}::text is null or key <= ${upTo}::text collate "C")
     order by key`

export async function insertFindings(db: Db, tenantId: string, jobId: string, rows: FindingRow[]) {
  if (rows.length === 0) return
  await db`
    insert into storage_reconciliation_findings ${db(rows.map((r) => ({ job_id: jobId, tenant_id: tenantId, kind: r.kind, bucket: r.bucket, key: r.key, size: r.size })))}
    on conflict do nothing`
}
