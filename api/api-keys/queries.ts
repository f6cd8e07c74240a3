import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export interface ApiKeyRow {
  id: string
  tenant_id: string
  user_id: string
  membership_id: string
  name: string
  display_prefix: string
  scopes: string[]
  created_at: Date
  expires_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}

export async function insertApiKey(db: Db, k: {
  tenantId: string; userId: string; membershipId: string; name: string; tokenHash: Buffer; displayPrefix: string; scopes: string[]; expiresAt: Date
}): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow[]>`
    insert into api_keys (tenant_id, user_id, membership_id, name, token_hash, display_prefix, scopes, expires_at)
    values (${k.tenantId}, ${k.userId}, ${k.membershipId}, ${k.name}, ${k.tokenHash}, ${k.displayPrefix}, ${k.scopes}, ${k.expiresAt})
    returning id, tenant_id, user_id, membership_id, name, display_prefix, scopes, created_at, expires_at, last_used_at, revoked_at`
  return row!
}

const SUMMARY = 'id, tenant_id, user_id, membership_id, name, display_prefix, scopes, created_at, expires_at, last_used_at, revoked_at'

/** Keys of one tenant, newest first, keyset-paged on (created_at, id); `userId` narrows to one member's own. */
export async function listApiKeys(db: Db, f: { tenantId: string; userId?: string }, after: CreatedCursor | null, limit: number) {
  return db<(ApiKeyRow & { cursor_at: string })[]>`
    select ${db.unsafe(SUMMARY)}, ${db.unsafe(CURSOR_AT)}
      from api_keys
     where tenant_id = ${f.tenantId} and (${f.userId ?? null}::uuid is null or user_id = ${f.userId ?? null}) ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

export async function findApiKey(db: Db, tenantId: string, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db<ApiKeyRow[]>`select ${db.unsafe(SUMMARY)} from api_keys where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** Revokes once: a key already revoked keeps its first revocation time. */
export async function revokeApiKey(db: Db, tenantId: string, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db<ApiKeyRow[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now())
     where tenant_id = ${tenantId} and id = ${id}
    returning ${db.unsafe(SUMMARY)}`
  return row
}

/** Every live key of one membership; returns how many were revoked now. */
export async function revokeMembershipApiKeys(db: Db, tenantId: string, membershipId: string): Promise<number> {
  const rows = await db`
    update api_keys set revoked_at = now()
     where tenant_id = ${tenantId} and membership_id = ${membershipId} and revoked_at is null
    returning 1`
  return rows.length
}

export async function membershipInTenant(db: Db, tenantId: string, membershipId: string): Promise<boolean> {
  const rows = await db`select 1 from memberships where tenant_id = ${tenantId} and id = ${membershipId}`
  return rows.length === 1
}
