import type { Db } from '../platform/db'
import type { SealedColumn } from '../platform/keyring'

export interface OutboxRow {
  id: string
  tenant_id: string | null
  recipient: string
  template: string
  sealed_data: Uint8Array | null
  sent_at: Date | null
  failed_at: Date | null
}

export async function insertOutbox(db: Db, m: { tenantId: string | null; to: string; template: string; sealedData: Buffer }): Promise<{ id: string }> {
  const [row] = await db<{ id: string }[]>`
    insert into mail_outbox (tenant_id, recipient, template, sealed_data)
    values (${m.tenantId}, ${m.to}, ${m.template}, ${m.sealedData})
    returning id`
  return row!
}

export async function findOutbox(db: Db, id: string): Promise<OutboxRow | undefined> {
  const [row] = await db<OutboxRow[]>`
    select id, tenant_id, recipient, template, sealed_data, sent_at, failed_at from mail_outbox where id = ${id}`
  return row
}

/** Sent: the sealed data (which may hold a reset code) is dropped with the same statement. */
export async function markOutboxSent(db: Db, id: string): Promise<void> {
  await db`update mail_outbox set sent_at = now(), sealed_data = null, last_error = null where id = ${id}`
}

/** Given up after the retries: the data goes too, since nobody will send it any more. */
export async function markOutboxFailed(db: Db, id: string, error: string): Promise<void> {
  await db`update mail_outbox set failed_at = now(), sealed_data = null, last_error = ${error.slice(0, 1000)} where id = ${id} and sent_at is null`
}

/** Unsent rows old enough that the API's own start after commit must have been lost. */
export async function listStaleOutbox(db: Db, olderThanSeconds: number, limit: number): Promise<{ id: string; tenant_id: string | null }[]> {
  return db<{ id: string; tenant_id: string | null }[]>`
    select id, tenant_id from mail_outbox
     where sent_at is null and failed_at is null and created_at < now() - make_interval(secs => ${olderThanSeconds})
     order by created_at limit ${limit}`
}

/** Template data of mail not yet sent, for the re-seal (activities/reseal-batch.ts). */
export const outboxData: SealedColumn = {
  name: 'mail_outbox.sealed_data',
  purpose: 'secrets',
  batch: (db, after, limit) => db<{ id: string; sealed: Buffer }[]>`
    select id::text as id, sealed_data as sealed from mail_outbox
     where sealed_data is not null and (${after}::uuid is null or id > ${after}::uuid) order by id limit ${limit}`,
  replace: async (db, id, from, to) => (await db`update mail_outbox set sealed_data = ${to} where id = ${id} and sealed_data = ${from}`).count === 1,
}
