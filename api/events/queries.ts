import type { Db } from '../platform/db'
import type { HeldCoverage } from '../platform/held'

export interface EventRow {
  id: string
  tenant_id: string
  type: string
  data: unknown
  occurred_at: Date
  dispatched_at: Date | null
}

export async function insertEvent(db: Db, e: { tenantId: string; type: string; data: unknown }): Promise<{ id: string; occurred_at: Date }> {
  const [row] = await db<{ id: string; occurred_at: Date }[]>`
    insert into events (tenant_id, type, data) values (${e.tenantId}, ${e.type}, ${db.json(e.data as never)})
    returning id, occurred_at`
  return row!
}

export async function findEvent(db: Db, tenantId: string, id: string): Promise<EventRow | undefined> {
  const [row] = await db<EventRow[]>`
    select id, tenant_id, type, data, occurred_at, dispatched_at from events where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** The dispatcher's batch: undispatched events, oldest first, locked until its transaction ends. Skip-locked, so
 *  a second dispatcher takes the next rows instead of waiting for (and then repeating) these. */
export async function claimUndispatchedEvents(tx: Db, limit: number): Promise<EventRow[]> {
  return tx<EventRow[]>`
    select id, tenant_id, type, data, occurred_at, dispatched_at from events
     where dispatched_at is null order by occurred_at, id limit ${limit} for update skip locked`
}

/** The dispatcher's lag for the worker's metrics: across tenants, since it measures the dispatcher, not a tenant. */
export async function oldestUndispatchedAgeSeconds(db: Db): Promise<number> {
  const [row] = await db<{ age: number | null }[]>`
    select extract(epoch from now() - min(occurred_at))::float8 as age from events where dispatched_at is null`
  return Math.max(0, row?.age ?? 0)
}

export async function markEventsDispatched(tx: Db, ids: string[]): Promise<void> {
  if (ids.length > 0) await tx`update events set dispatched_at = now() where id = any(${ids}::uuid[])`
}

/** The condition "a legal hold covers event `e`" (an alias of `events`), for the purges: the event's tenant is held
 *  whole, or its data names a held member or a held project anywhere (an `audit.entry` names its actor, a
 *  `training_job.completed` its job, …: any string in the data equal to the held id). */
export const eventHeld = (db: Db, held: HeldCoverage, e: string) => db`(
  ${db(e)}.tenant_id = any(${held.tenantIds}::uuid[])
  or exists (
    select 1 from unnest(${[...held.members.tenantIds, ...held.projects.tenantIds]}::uuid[],
                         ${[...held.members.userIds, ...held.projects.projectIds]}::uuid[]) as h(tenant_id, subject_id)
     where h.tenant_id = ${db(e)}.tenant_id
       and jsonb_path_exists(${db(e)}.data, '$.** ? (@ == $id)', jsonb_build_object('id', h.subject_id::text))))`

/** The retention purge, one batch: dispatched events that occurred before `before`, oldest first. An event a webhook
 *  message still points at stays until that message is purged (its data is what a redelivery sends, and deleting
 *  it would take the message with it, by the foreign key, before the message's own period ends). An event a legal
 *  hold covers stays until the hold is released. */
export async function purgeDispatchedEvents(db: Db, before: Date, batch: number, held: HeldCoverage): Promise<number> {
  const rows = await db`
    delete from events where id in (
      select e.id from events e
       where e.dispatched_at is not null and e.occurred_at < ${before}
         and not exists (select 1 from webhook_messages m where m.event_id = e.id)
         and not ${eventHeld(db, held, 'e')}
       order by e.occurred_at limit ${batch})
    returning 1`
  return rows.length
}
