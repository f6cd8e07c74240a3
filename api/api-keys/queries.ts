import type { Db } from '../platform/db'

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
