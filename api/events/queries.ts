import type { Db } from '../platform/db'

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
