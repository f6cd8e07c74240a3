import type { Db } from '../platform/db'
import { RETAINED_TABLES, TABLE_STEPS } from './steps'

export type DeletionJobStatus = 'queued' | 'running' | 'blocked' | 'failed' | 'succeeded'
export type DeletionPhase = 'credentials' | 'buckets' | 'rows' | 'receipt' | 'done'
export interface PendingKey {
  name: string
  versionId?: string
}

export interface DeletionJobRow {
  id: string
  tenant_id: string
  status: DeletionJobStatus
  trigger: 'request' | 'window_elapsed'
  requested_by: string | null
  claim: string | null
  attempts: number
  phase: DeletionPhase
  step_index: number
  pending_keys: PendingKey[] | null
  /** The last seq of the tenant's audit chain whose personal part the job has blanked (migrations/0100). */
  audit_erased_through: number
  counts: Record<string, number>
  buckets: Record<string, { name: string; regionId: string }>
  final_event_id: string | null
  blocked_reason: string | null
  error: string | null
  receipt: Record<string, unknown> | null
  created_at: Date
  updated_at: Date
  started_at: Date | null
  finished_at: Date | null
}

/** Null when the tenant already has an open (queued or running) job: the partial unique index decides, so two
 *  concurrent requests cannot both win. */
export async function insertDeletionJob(
  db: Db,
  j: { tenantId: string; trigger: DeletionJobRow['trigger']; requestedBy: string | null },
): Promise<DeletionJobRow | null> {
  const [row] = await db<DeletionJobRow[]>`
    insert into tenant_deletion_jobs (tenant_id, trigger, requested_by) values (${j.tenantId}, ${j.trigger}, ${j.requestedBy})
    on conflict (tenant_id) where status in ('queued', 'running') do nothing
    returning *`
  return row ?? null
}

export async function findDeletionJob(db: Db, tenantId: string, id: string): Promise<DeletionJobRow | undefined> {
  const [row] = await db<DeletionJobRow[]>`select * from tenant_deletion_jobs where tenant_id = ${tenantId} and id = ${id}`
  return row
}

export async function findOpenDeletionJob(db: Db, tenantId: string): Promise<DeletionJobRow | undefined> {
  const [row] = await db<DeletionJobRow[]>`select * from tenant_deletion_jobs where tenant_id = ${tenantId} and status in ('queued', 'running')`
  return row
}

/** Compare-and-set from failed to queued; null when the job is not failed, or another job of the tenant is open. */
export async function requeueFailedJob(db: Db, tenantId: string, id: string): Promise<DeletionJobRow | null> {
  const [row] = await db<DeletionJobRow[]>`
    update tenant_deletion_jobs set status = 'queued', claim = null, error = null, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status = 'failed'
       and not exists (select 1 from tenant_deletion_jobs o where o.tenant_id = ${tenantId} and o.status in ('queued', 'running'))
    returning *`
  return row ?? null
}

/** The claim: a queued job, or a running one this same claim already holds (a retried activity, a resumed worker),
 *  becomes running under `claim`. Anything else (blocked, failed, succeeded, another run's) answers null. */
export async function claimDeletionJob(db: Db, id: string, claim: string): Promise<DeletionJobRow | null> {
  const [row] = await db<DeletionJobRow[]>`
    update tenant_deletion_jobs
       set status = 'running', claim = ${claim}, attempts = attempts + (claim is distinct from ${claim})::int,
           started_at = coalesce(started_at, now()), updated_at = now()
     where id = ${id} and (status = 'queued' or (status = 'running' and claim = ${claim}))
    returning *`
  return row ?? null
}

/** The job row, locked for the caller's transaction, while `claim` still holds it running. */
export async function lockClaimedJob(tx: Db, id: string, claim: string): Promise<DeletionJobRow | undefined> {
  const [row] = await tx<DeletionJobRow[]>`select * from tenant_deletion_jobs where id = ${id} and claim = ${claim} and status = 'running' for update`
  return row
}

export async function addCount(tx: Db, id: string, key: string, n: number): Promise<void> {
  await tx`
    update tenant_deletion_jobs
       set counts = jsonb_set(counts, array[${key}::text], to_jsonb(coalesce((counts ->> ${key})::bigint, 0) + ${n})), updated_at = now()
     where id = ${id}`
}

export async function noteBucket(tx: Db, id: string, kind: string, bucket: { name: string; regionId: string }): Promise<void> {
  await tx`update tenant_deletion_jobs set buckets = jsonb_set(buckets, array[${kind}::text], ${tx.json(bucket)}), updated_at = now() where id = ${id}`
}

export async function moveCursor(tx: Db, id: string, phase: DeletionPhase, stepIndex: number): Promise<void> {
  await tx`update tenant_deletion_jobs set phase = ${phase}, step_index = ${stepIndex}, pending_keys = null, updated_at = now() where id = ${id}`
}

export async function setAuditCursor(tx: Db, id: string, through: number): Promise<void> {
  await tx`update tenant_deletion_jobs set audit_erased_through = ${through}, updated_at = now() where id = ${id}`
}

export async function setPendingKeys(tx: Db, id: string, keys: PendingKey[] | null): Promise<void> {
  await tx`update tenant_deletion_jobs set pending_keys = ${keys === null ? null : tx.json(keys as never)}, updated_at = now() where id = ${id}`
}

export async function setFinalEvent(tx: Db, id: string, eventId: string): Promise<void> {
  await tx`update tenant_deletion_jobs set final_event_id = ${eventId}, updated_at = now() where id = ${id}`
}

export async function markJobBlocked(tx: Db, id: string, reason: string): Promise<void> {
  await tx`update tenant_deletion_jobs set status = 'blocked', blocked_reason = ${reason}, updated_at = now(), finished_at = now() where id = ${id}`
}

/** Only a job still open becomes failed: a blocked or finished one keeps its state. */
export async function markJobFailed(db: Db, id: string, error: string): Promise<void> {
  await db`
    update tenant_deletion_jobs set status = 'failed', error = ${error.slice(0, 2000)}, updated_at = now(), finished_at = now()
     where id = ${id} and status in ('queued', 'running')`
}

export async function markJobSucceeded(tx: Db, id: string, receipt: Record<string, unknown>): Promise<void> {
  await tx`
    update tenant_deletion_jobs set status = 'succeeded', phase = 'done', receipt = ${tx.json(receipt as never)}, updated_at = now(), finished_at = now()
     where id = ${id}`
}

// ── The tenant's rows ────────────────────────────────────────────────────────────────────────────────────────────
// The deletion is the one writer that crosses every domain's tables, by tenant only: the table name is checked against
// the step list (never taken from input) and quoted as an identifier.

function stepTable(table: string): string {
  if (!(TABLE_STEPS as readonly string[]).includes(table) && !(table in RETAINED_TABLES)) throw new Error(`${table} is not a deletion step`)
  return `"${table}"`
}

/** Deletes up to `limit` of the tenant's rows of one table by physical row id and adds how many to the job's count
 *  `key`, in one statement (a round trip a batch is a measurable share of it); answers how many. */
export async function deleteTenantRowsBatch(tx: Db, table: string, tenantId: string, limit: number, job: { jobId: string; key: string }): Promise<number> {
  const t = stepTable(table)
  const [row] = await tx.unsafe<{ n: number }[]>(
    `with gone as (delete from ${t} where ctid = any(array(select ctid from ${t} where tenant_id = $1 limit $2)) returning 1),
          n as (select count(*)::int as n from gone)
     update tenant_deletion_jobs set counts = jsonb_set(counts, array[$4::text], to_jsonb(coalesce((counts ->> $4)::bigint, 0) + n.n)), updated_at = now()
       from n where id = $3
     returning n.n`,
    [tenantId, limit, job.jobId, job.key],
  )
  if (!row) throw new Error(`deletion job ${job.jobId} is gone`)
  return row.n
}

export async function remainingTenantRows(db: Db, table: string, tenantId: string): Promise<number> {
  const [row] = await db.unsafe<{ n: number }[]>(`select count(*)::int as n from ${stepTable(table)} where tenant_id = $1`, [tenantId])
  return row!.n
}

/** Tables of the live schema with a tenant_id column (what the step list must cover). */
export const tablesWithTenantId = (db: Db) =>
  db<{ table_name: string }[]>`
    select c.table_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
     where c.table_schema = current_schema() and c.column_name = 'tenant_id'
     order by 1`

/** Foreign keys between tables of the live schema: child references parent. */
export const foreignKeyEdges = (db: Db) =>
  db<{ child: string; parent: string }[]>`
    select distinct cl.relname as child, pl.relname as parent
      from pg_constraint k join pg_class cl on cl.oid = k.conrelid join pg_class pl on pl.oid = k.confrelid
     where k.contype = 'f' and cl.relnamespace = (select oid from pg_namespace where nspname = current_schema())`
