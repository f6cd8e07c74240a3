import type { Db } from '../platform/db'

export interface UsageEventInput {
  tenantId: string
  projectId: string | null
  meter: string
  quantity: bigint
  subject: string | null
  occurredAt: Date
  idempotencyKey: string
  payloadHash: Buffer
}

/** Inserts the event unless its key is taken in the tenant; answers the stored hash when it was (a concurrent
 *  insert of the same key waits for the first writer's outcome, so a rolled-back first write leaves the key free). */
export async function insertUsageEvent(db: Db, e: UsageEventInput): Promise<{ inserted: true } | { inserted: false; payloadHash: Buffer }> {
  const rows = await db`
    insert into usage_events (tenant_id, project_id, meter, quantity, subject, occurred_at, idempotency_key, payload_hash)
    values (${e.tenantId}, ${e.projectId}, ${e.meter}, ${e.quantity.toString()}::bigint, ${e.subject}, ${e.occurredAt}, ${e.idempotencyKey}, ${e.payloadHash})
    on conflict (tenant_id, idempotency_key) do nothing
    returning id`
  if (rows.length > 0) return { inserted: true }
  const [stored] = await db<{ payload_hash: Buffer }[]>`
    select payload_hash from usage_events where tenant_id = ${e.tenantId} and idempotency_key = ${e.idempotencyKey}`
  return { inserted: false, payloadHash: stored!.payload_hash }
}

/** Several events in one statement (the folded request counts); keys already taken are skipped, and so are the
 *  events of a tenant deleted since they were counted (its rows would be deleted with it). */
export async function insertUsageEvents(db: Db, events: UsageEventInput[]): Promise<number> {
  if (events.length === 0) return 0
  const rows = await db`
    insert into usage_events (tenant_id, project_id, meter, quantity, subject, occurred_at, idempotency_key, payload_hash)
    select u.tenant_id, u.project_id, u.meter, u.quantity, u.subject, u.occurred_at, u.idempotency_key, decode(u.payload_hex, 'hex') from unnest(${events.map((e) => e.tenantId)}::uuid[], ${events.map((e) => e.projectId)}::uuid[], ${events.map((e) => e.meter)}::text[],
                         ${events.map((e) => e.quantity.toString())}::bigint[], ${events.map((e) => e.subject)}::text[],
                         ${events.map((e) => e.occurredAt.toISOString())}::timestamptz[], ${events.map((e) => e.idempotencyKey)}::text[],
                         ${events.map((e) => e.payloadHash.toString('hex'))}::text[]) u (tenant_id, project_id, meter, quantity, subject, occurred_at, idempotency_key, payload_hex)
     where exists (select 1 from tenants t where t.id = u.tenant_id)
    on conflict (tenant_id, idempotency_key) do nothing
    returning id`
  return rows.length
}

export interface UsageFilter {
  tenantId: string
  from: Date
  to: Date
  projectId: string | null
  meter: string | null
}

export interface UsageGroupRow {
  meter: string
  project_id: string | null
  day: string | null
  /** sum(quantity), max(quantity) and count(distinct subject), as decimal text: bigint sums exceed 2^53. */
  total: string
  peak: string
  distinct_subjects: string
}

/** The tenant's events in [from, to), grouped by meter and, when asked, project and UTC day. Only index columns are
 *  read (usage_events_tenant_time_idx). */
export function groupUsage(db: Db, f: UsageFilter, by: { project: boolean; day: boolean }) {
  const project = by.project ? db`project_id` : db`null::uuid`
  const day = by.day ? db`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD')` : db`null::text`
  return db<UsageGroupRow[]>`
    select meter, ${project} as project_id, ${day} as day,
           coalesce(sum(quantity), 0)::text as total, coalesce(max(quantity), 0)::text as peak, count(distinct subject)::text as distinct_subjects
      from usage_events
     where tenant_id = ${f.tenantId} and occurred_at >= ${f.from} and occurred_at < ${f.to}
       and (${f.projectId}::uuid is null or project_id = ${f.projectId}::uuid)
       and (${f.meter}::text is null or meter = ${f.meter}::text)
     group by 1, 2, 3
     order by 1, 3 nulls first, 2 nulls first`
}

/** Billing's read (api/billing/usage-source.ts): per meter, the events that occurred in [occurredFrom, occurredTo) and
 *  were recorded in [recordedFrom, recordedBefore), so an invoice counts only what had arrived by its cut-off and the
 *  next one picks up what arrived later. */
export function groupRecordedUsage(db: Db, f: { tenantId: string; occurredFrom: Date; occurredTo: Date; recordedFrom: Date; recordedBefore: Date }) {
  return db<{ meter: string; total: string; peak: string; distinct_subjects: string }[]>`
    select meter, coalesce(sum(quantity), 0)::text as total, coalesce(max(quantity), 0)::text as peak, count(distinct subject)::text as distinct_subjects
      from usage_events
     where tenant_id = ${f.tenantId} and occurred_at >= ${f.occurredFrom} and occurred_at < ${f.occurredTo}
       and recorded_at >= ${f.recordedFrom} and recorded_at < ${f.recordedBefore}
     group by meter
     order by meter`
}
