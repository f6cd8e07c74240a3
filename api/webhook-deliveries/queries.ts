import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export type MessageStatus = 'pending' | 'succeeded' | 'failed'

export interface MessageRow {
  id: string
  tenant_id: string
  endpoint_id: string
  event_id: string
  event_type: string
  status: MessageStatus
  attempt_count: number
  redeliveries: number
  last_attempt_at: Date | null
  started_at: Date | null
  created_at: Date
}

/** A message with what its delivery carries: the event's envelope fields (joined from the outbox). */
export interface OutgoingMessageRow extends MessageRow {
  event_data: unknown
  occurred_at: Date
}

export interface AttemptRow {
  id: string
  message_id: string
  attempted_at: Date
  succeeded: boolean
  response_status: number | null
  duration_ms: number
  response_body: string | null
  error_class: string | null
}

const MESSAGE = 'id, tenant_id, endpoint_id, event_id, event_type, status, attempt_count, redeliveries, last_attempt_at, started_at, created_at'

/** One message per (event, endpoint); a repeat (another dispatcher pass) inserts nothing. */
export async function insertMessages(db: Db, rows: { tenantId: string; endpointId: string; eventId: string; eventType: string }[]): Promise<MessageRow[]> {
  if (rows.length === 0) return []
  const values = rows.map((r) => ({ tenant_id: r.tenantId, endpoint_id: r.endpointId, event_id: r.eventId, event_type: r.eventType }))
  return db<MessageRow[]>`
    insert into webhook_messages ${db(values)}
    on conflict (event_id, endpoint_id) do nothing
    returning ${db.unsafe(MESSAGE)}`
}

export async function markMessagesStarted(db: Db, ids: string[]): Promise<void> {
  if (ids.length > 0) await db`update webhook_messages set started_at = now() where id = any(${ids}::uuid[]) and started_at is null`
}

/** Committed messages whose workflow start was lost (a crash between commit and start), oldest first. Skip-locked,
 *  so two dispatchers split them instead of both starting the same ones. */
export async function claimUnstartedMessages(db: Db, olderThanSeconds: number, limit: number): Promise<MessageRow[]> {
  return db<MessageRow[]>`
    select ${db.unsafe(MESSAGE)} from webhook_messages
     where started_at is null and created_at < now() - make_interval(secs => ${olderThanSeconds})
     order by created_at limit ${limit} for update skip locked`
}

export async function findOutgoingMessage(db: Db, tenantId: string, id: string): Promise<OutgoingMessageRow | undefined> {
  const [row] = await db<OutgoingMessageRow[]>`
    select m.id, m.tenant_id, m.endpoint_id, m.event_id, m.event_type, m.status, m.attempt_count, m.redeliveries, m.last_attempt_at,
           m.started_at, m.created_at, e.data as event_data, e.occurred_at
      from webhook_messages m join events e on e.id = m.event_id
     where m.tenant_id = ${tenantId} and m.id = ${id}`
  return row
}

export async function findMessage(db: Db, tenantId: string, endpointId: string, id: string): Promise<MessageRow | undefined> {
  const [row] = await db<MessageRow[]>`
    select ${db.unsafe(MESSAGE)} from webhook_messages where tenant_id = ${tenantId} and endpoint_id = ${endpointId} and id = ${id}`
  return row
}

/** An endpoint's messages, newest first, keyset-paged on (created_at, id). */
export async function listMessages(db: Db, f: { tenantId: string; endpointId: string; status?: MessageStatus }, after: CreatedCursor | null, limit: number) {
  return db<(MessageRow & { cursor_at: string })[]>`
    select ${db.unsafe(MESSAGE)}, ${db.unsafe(CURSOR_AT)}
      from webhook_messages
     where tenant_id = ${f.tenantId} and endpoint_id = ${f.endpointId} and (${f.status ?? null}::text is null or status = ${f.status ?? null})
           ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

export async function listAttempts(db: Db, messageId: string): Promise<AttemptRow[]> {
  return db<AttemptRow[]>`
    select id, message_id, attempted_at, succeeded, response_status, duration_ms, response_body, error_class
      from webhook_attempts where message_id = ${messageId} order by attempted_at, id`
}

export interface AttemptRecord {
  messageId: string
  endpointId: string
  attemptedAt: Date
  succeeded: boolean
  responseStatus: number | null
  durationMs: number
  responseBody: string | null
  errorClass: string | null
}

/** Records an attempt and moves its message on: succeeded, failed (`final`), or still pending. Answers the attempt's id. */
export async function recordAttempt(db: Db, a: AttemptRecord, final: boolean): Promise<string> {
  const [attempt] = await db<{ id: string }[]>`
    insert into webhook_attempts (message_id, endpoint_id, attempted_at, succeeded, response_status, duration_ms, response_body, error_class)
    values (${a.messageId}, ${a.endpointId}, ${a.attemptedAt}, ${a.succeeded}, ${a.responseStatus}, ${a.durationMs}, ${a.responseBody}, ${a.errorClass})
    returning id`
  const status: MessageStatus = a.succeeded ? 'succeeded' : final ? 'failed' : 'pending'
  await db`
    update webhook_messages set attempt_count = attempt_count + 1, last_attempt_at = ${a.attemptedAt}, status = ${status}
     where id = ${a.messageId}`
  return attempt!.id
}

export async function markMessageFailed(db: Db, id: string): Promise<void> {
  await db`update webhook_messages set status = 'failed' where id = ${id} and status = 'pending'`
}

/** The oldest attempt of the endpoint's current failing streak (none since its newest success), if any. */
export async function failingSince(db: Db, endpointId: string): Promise<Date | null> {
  const [row] = await db<{ since: Date | null }[]>`
    select min(attempted_at) as since from webhook_attempts
     where endpoint_id = ${endpointId}
       and attempted_at > coalesce((select max(attempted_at) from webhook_attempts where endpoint_id = ${endpointId} and succeeded), '-infinity')`
  return row?.since ?? null
}

/** Takes the endpoint's next send slot and moves it `intervalMs` on, atomically: concurrent attempts (on any
 *  worker) each get their own slot, so a burst wakes spread out. Answers how long until that slot (0: now), by the
 *  database's clock. The slot is when to wake, not leave to send: `claimSend` is. */
export async function reserveSlot(db: Db, endpointId: string, intervalMs: number): Promise<number> {
  const step = intervalMs / 1000
  const [row] = await db<{ wait_ms: number }[]>`
    insert into webhook_endpoint_pacing as p (endpoint_id, next_slot_at)
    values (${endpointId}, clock_timestamp() + make_interval(secs => ${step}))
    on conflict (endpoint_id) do update set next_slot_at = greatest(p.next_slot_at, clock_timestamp()) + make_interval(secs => ${step})
    returning greatest(0, extract(epoch from next_slot_at - make_interval(secs => ${step}) - clock_timestamp()) * 1000)::float8 as wait_ms`
  return row!.wait_ms
}

/** The gate at the moment of sending: takes the send if the endpoint's last one is at least `intervalMs` ago
 *  (stamping it now), atomically across workers. Answers the stamp when taken (the send's own time, by the one clock
 *  every worker's gate reads), else how long until it may be. */
export async function claimSend(db: Db, endpointId: string, intervalMs: number): Promise<{ sentAt: Date } | { waitMs: number }> {
  const step = intervalMs / 1000
  const [taken] = await db<{ sent_at: Date }[]>`
    insert into webhook_endpoint_pacing as p (endpoint_id, next_slot_at, last_sent_at)
    values (${endpointId}, clock_timestamp(), clock_timestamp())
    on conflict (endpoint_id) do update set last_sent_at = clock_timestamp()
     where p.last_sent_at is null or p.last_sent_at <= clock_timestamp() - make_interval(secs => ${step})
    returning p.last_sent_at as sent_at`
  if (taken) return { sentAt: taken.sent_at }
  // Another send just passed; a row it committed after this statement began may be newer still: at least 1 ms.
  const [row] = await db<{ wait_ms: number }[]>`
    select greatest(1, extract(epoch from last_sent_at + make_interval(secs => ${step}) - clock_timestamp()) * 1000)::float8 as wait_ms
      from webhook_endpoint_pacing where endpoint_id = ${endpointId}`
  return { waitMs: row?.wait_ms ?? 1 }
}

/** Marks messages for one more run each (redelivery) and answers them with their new run number. Only messages
 *  that are not pending: a pending one still has a run that will attempt it. */
export async function claimRedeliveries(db: Db, f: { tenantId: string; endpointId: string; messageId?: string; failedSince?: Date }): Promise<MessageRow[]> {
  return db<MessageRow[]>`
    update webhook_messages set redeliveries = redeliveries + 1, status = 'pending', started_at = null
     where tenant_id = ${f.tenantId} and endpoint_id = ${f.endpointId} and status <> 'pending'
       and (${f.messageId ?? null}::uuid is null or id = ${f.messageId ?? null})
       and (${f.failedSince ?? null}::timestamptz is null or (status = 'failed' and created_at >= ${f.failedSince ?? null}))
    returning ${db.unsafe(MESSAGE)}`
}

/** The retention purge, one batch: finished messages with no delivery activity since `before` (created and last
 *  attempted before it), oldest first; their attempts go with them (the foreign key cascades). A pending message is
 *  a delivery under way (a redelivery of an old one, say) and stays. Run before the events purge, which keeps an
 *  event as long as a message points at it. */
export async function purgeOldMessages(db: Db, before: Date, batch: number): Promise<number> {
  const rows = await db`
    delete from webhook_messages where id in (
      select id from webhook_messages
       where created_at < ${before} and coalesce(last_attempt_at, created_at) < ${before} and status <> 'pending'
       order by created_at limit ${batch})
    returning 1`
  return rows.length
}
