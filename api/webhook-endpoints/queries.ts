import type { Db } from '../platform/db'
import type { SealedColumn } from '../platform/keyring'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export type DisabledReason = 'gone' | 'failing' | 'manual' | 'tenant_deleted'

export interface WebhookEndpointRow {
  id: string
  tenant_id: string
  url: string
  events: string[]
  description: string | null
  enabled: boolean
  disabled_reason: DisabledReason | null
  disabled_at: Date | null
  rate_limit_per_second: number | null
  secret_sealed: Buffer
  previous_secret_sealed: Buffer | null
  previous_secret_expires_at: Date | null
  version: number
  created_at: Date
  updated_at: Date
}

export async function insertEndpoint(
  db: Db,
  e: {
    tenantId: string
    url: string
    events: string[]
    description: string | null
    rateLimitPerSecond: number | null
    secretSealed: Buffer
  },
): Promise<WebhookEndpointRow> {
  const [row] = await db<WebhookEndpointRow[]>`
    insert into webhook_endpoints (tenant_id, url, events, description, rate_limit_per_second, secret_sealed)
    values (${e.tenantId}, ${e.url}, ${e.events}, ${e.description}, ${e.rateLimitPerSecond}, ${e.secretSealed})
    returning *`
  return row!
}

/** One tenant's endpoints, newest first, keyset-paged on (created_at, id); `enabled` narrows when given. */
export function listEndpoints(db: Db, tenantId: string, enabled: boolean | undefined, after: CreatedCursor | null, limit: number) {
  return db<(WebhookEndpointRow & { cursor_at: string })[]>`
    select *, ${db.unsafe(CURSOR_AT)}
      from webhook_endpoints
     where tenant_id = ${tenantId} and (${enabled ?? null}::boolean is null or enabled = ${enabled ?? null}) ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

export async function findEndpoint(db: Db, tenantId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db<WebhookEndpointRow[]>`select * from webhook_endpoints where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** The row as it is before a change in the same transaction (its audit entry's "before"); locked until commit. */
export async function lockEndpoint(db: Db, tenantId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db<WebhookEndpointRow[]>`select * from webhook_endpoints where tenant_id = ${tenantId} and id = ${id} for update`
  return row
}

/** Enabled endpoints of the tenant subscribed to `type`, oldest first (the dispatcher's fan-out). */
/** tenant.deleted goes to every enabled endpoint: the one event a receiver gets without subscribing, the last. */
export function endpointsForEvent(db: Db, tenantId: string, type: string) {
  return db<WebhookEndpointRow[]>`
    select * from webhook_endpoints
     where tenant_id = ${tenantId} and enabled and (events @> array[${type}]::text[] or ${type} = 'tenant.deleted')
     order by created_at, id`
}

/** The tenant deletion's last step for endpoints (after the final event): none signs or receives anything again. */
export async function disableTenantEndpoints(db: Db, tenantId: string): Promise<number> {
  const rows = await db`
    update webhook_endpoints set enabled = false, disabled_reason = 'tenant_deleted', disabled_at = now(), updated_at = now()
     where tenant_id = ${tenantId} and enabled
    returning 1`
  return rows.length
}

export interface EndpointChange {
  url?: string
  events?: string[]
  description?: string | null
  /** undefined: unchanged; null: no limit. */
  rateLimitPerSecond?: number | null
  enabled?: boolean
}

/** The version comparison sits in the UPDATE itself, so a stale If-Match never writes. Disabling by hand records
 *  'manual'; enabling clears whatever disabled it; a no-op on `enabled` keeps the reason it had. */
export async function updateEndpoint(db: Db, tenantId: string, id: string, expectedVersion: number | null, c: EndpointChange) {
  const setRate = c.rateLimitPerSecond !== undefined
  const [row] = await db<WebhookEndpointRow[]>`
    update webhook_endpoints
       set url = coalesce(${c.url ?? null}, url), events = coalesce(${c.events ?? null}::text[], events),
           description = case when ${c.description !== undefined} then ${c.description ?? null} else description end,
           rate_limit_per_second = case when ${setRate} then ${c.rateLimitPerSecond ?? null}::integer else rate_limit_per_second end,
           disabled_reason = case when ${c.enabled ?? null}::boolean is null or ${c.enabled ?? null}::boolean = enabled then disabled_reason
                                  when ${c.enabled ?? null}::boolean then null else 'manual' end,
           disabled_at = case when ${c.enabled ?? null}::boolean is null or ${c.enabled ?? null}::boolean = enabled then disabled_at
                              when ${c.enabled ?? null}::boolean then null else now() end,
           enabled = coalesce(${c.enabled ?? null}::boolean, enabled),
           version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning *`
  return row
}

/** The new secret signs from now on; the current one becomes the previous and signs beside it until `overlapSeconds`
 *  have passed. A rotation during an overlap drops the older previous secret. */
export async function rotateEndpointSecret(db: Db, tenantId: string, id: string, secretSealed: Buffer, overlapSeconds: number) {
  const [row] = await db<WebhookEndpointRow[]>`
    update webhook_endpoints
       set previous_secret_sealed = secret_sealed, previous_secret_expires_at = now() + make_interval(secs => ${overlapSeconds}),
           secret_sealed = ${secretSealed}, version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id}
    returning *`
  return row
}

/** Disables an enabled endpoint for a delivery reason; undefined when it was not enabled (nothing changes). */
export async function markEndpointDisabled(db: Db, tenantId: string, id: string, reason: 'gone' | 'failing') {
  const [row] = await db<WebhookEndpointRow[]>`
    update webhook_endpoints
       set enabled = false, disabled_reason = ${reason}, disabled_at = now(), version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and enabled
    returning *`
  return row
}

export async function deleteEndpoint(db: Db, tenantId: string, id: string, expectedVersion: number | null): Promise<boolean> {
  const rows = await db`
    delete from webhook_endpoints
     where tenant_id = ${tenantId} and id = ${id} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning 1`
  return rows.length > 0
}

/** Signing secrets, current and previous, for the re-seal (activities/reseal-batch.ts). Not a change of the
 *  endpoint: its version stays. */
export const endpointSecrets: SealedColumn[] = (['secret_sealed', 'previous_secret_sealed'] as const).map((column) => ({
  name: `webhook_endpoints.${column}`,
  purpose: 'secrets',
  batch: (db: Db, after: string | null, limit: number) => db<{ id: string; sealed: Buffer }[]>`
    select id::text as id, ${db(column)} as sealed from webhook_endpoints
     where ${db(column)} is not null and (${after}::uuid is null or id > ${after}::uuid) order by id limit ${limit}`,
  replace: async (db: Db, id: string, from: Buffer, to: Buffer) =>
    (await db`update webhook_endpoints set ${db(column)} = ${to} where id = ${id} and ${db(column)} = ${from}`).count === 1,
}))
