import type { Db } from '../platform/db'
import type { Permission, ProjectRole, Role } from '../identity/permissions'
import type { TenantLifecycle } from '../identity/standing'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export interface ApiKeyRow {
  id: string
  tenant_id: string
  user_id: string
  membership_id: string
  name: string
  display_prefix: string
  scopes: string[]
  /** The project a project-scoped token acts in; null for a tenant-wide one. */
  project_id: string | null
  created_at: Date
  expires_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}

export async function insertApiKey(
  db: Db,
  k: {
    tenantId: string
    userId: string
    membershipId: string
    name: string
    tokenHash: Buffer
    displayPrefix: string
    scopes: string[]
    projectId: string | null
    expiresAt: Date
  },
): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow[]>`
    insert into api_keys (tenant_id, user_id, membership_id, name, token_hash, display_prefix, scopes, project_id, expires_at)
    values (${k.tenantId}, ${k.userId}, ${k.membershipId}, ${k.name}, ${k.tokenHash}, ${k.displayPrefix}, ${k.scopes}, ${k.projectId}, ${k.expiresAt})
    returning ${db.unsafe(SUMMARY)}`
  return row!
}

const SUMMARY = 'id, tenant_id, user_id, membership_id, name, display_prefix, scopes, project_id, created_at, expires_at, last_used_at, revoked_at'

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

/** Every key of one user in every tenant, revoked and expired ones too, newest first (their own data export). */
export async function listUserApiKeys(db: Db, userId: string): Promise<ApiKeyRow[]> {
  return db<ApiKeyRow[]>`select ${db.unsafe(SUMMARY)} from api_keys where user_id = ${userId} order by created_at desc, id desc`
}

/** The digests of every key of one tenant with its expiry: what a tenant deletion retires (api/credentials/queries.ts)
 *  before its rows go. */
export async function tenantApiKeyDigests(db: Db, tenantId: string): Promise<{ digest: Buffer; expires_at: Date }[]> {
  return db<{ digest: Buffer; expires_at: Date }[]>`select token_hash as digest, expires_at from api_keys where tenant_id = ${tenantId}`
}

/** Every live key of one user, in every tenant (account erasure); returns how many were revoked now. */
export async function revokeUserApiKeys(db: Db, userId: string): Promise<number> {
  const rows = await db`update api_keys set revoked_at = now() where user_id = ${userId} and revoked_at is null returning 1`
  return rows.length
}

/** Account erasure: every key row of one user goes; answers their digests and expiries for retired_credentials. */
export async function deleteUserApiKeys(db: Db, userId: string): Promise<{ digest: Buffer; expires_at: Date }[]> {
  return db<{ digest: Buffer; expires_at: Date }[]>`delete from api_keys where user_id = ${userId} returning token_hash as digest, expires_at`
}

// ── Resolving a presented token (api/credentials) ──────────────────────────────────────────────────────────

export interface PatRow {
  id: string
  /** The token's name: the audit trail's label of what it does. */
  name: string
  tenant_id: string
  user_id: string
  membership_id: string
  scopes: string[]
  expires_at: Date
  revoked_at: Date | null
  last_used_at: Date | null
  role: Role
  membership_status: string
  membership_expires_at: Date | null
  user_status: string
  tenant_lifecycle: TenantLifecycle
  project_id: string | null
  /** The member's project membership in the token's project, if any (read with the token, evicted with its changes). */
  project_role: ProjectRole | null
  project_grant: Permission[] | null
  project_deny: Permission[] | null
  project_expires_at: Date | null
  /** The billing block's two inputs (api/billing/block.ts), null without a subscription. */
  subscription_status: string | null
  operator_blocked: boolean | null
}

export async function findPatByHash(db: Db, hash: Buffer): Promise<PatRow | undefined> {
  const [row] = await db<PatRow[]>`
    select k.id, k.name, k.tenant_id, k.user_id, k.membership_id, k.scopes, k.expires_at, k.revoked_at, k.last_used_at,
           m.role, m.status as membership_status, m.expires_at as membership_expires_at, u.status as user_status,
           t.lifecycle as tenant_lifecycle, b.status as subscription_status, b.operator_blocked_at is not null as operator_blocked,
           k.project_id, pm.role as project_role, pm.grant_points as project_grant, pm.deny_points as project_deny,
           pm.expires_at as project_expires_at
      from api_keys k
      join memberships m on m.id = k.membership_id and m.tenant_id = k.tenant_id
      join users u on u.id = k.user_id
      join tenants t on t.id = k.tenant_id
      left join project_members pm on pm.project_id = k.project_id and pm.user_id = k.user_id
      left join subscriptions b on b.tenant_id = k.tenant_id
     where k.token_hash = ${hash}`
  return row
}

/** One UPDATE for a whole batch of PAT uses (see LastUsedRecorder). */
export async function recordPatUses(db: Db, uses: { id: string; at: Date }[]): Promise<void> {
  if (uses.length === 0) return
  const ids = uses.map((u) => u.id)
  const ats = uses.map((u) => u.at.toISOString())
  await db`
    update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, v.at), v.at)
      from (select unnest(${ids}::uuid[]) as id, unnest(${ats}::timestamptz[]) as at) v
     where k.id = v.id`
}

/** Every live key of a tenant being deleted; returns how many were revoked now. */
export async function revokeTenantApiKeys(db: Db, tenantId: string): Promise<number> {
  const rows = await db`update api_keys set revoked_at = now() where tenant_id = ${tenantId} and revoked_at is null returning 1`
  return rows.length
}
