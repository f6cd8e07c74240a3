import { sha256 } from '../platform/crypto'
import type { Db } from '../platform/db'
import { ApiError } from '../platform/errors'
import { findPatByHash, type PatRow } from '../api-keys/queries'
import { blockReasonsOf } from '../billing/block'
import { effectivePermissions, projectPermissions, type Permission } from '../identity/permissions'
import type { Membership, Principal, ProjectBinding } from '../identity/service'
import { PAT_PREFIX, SESSION_PREFIX } from '../identity/tokens'
import { findSessionByHash, touchSession } from '../sessions/queries'
import { isTenantDeleted } from '../tenants/queries'
import type { CredentialCache } from './cache'
import type { LastUsedRecorder } from './last-used'
import { isRetired } from './queries'

const unauthorized = () => new ApiError('UNAUTHORIZED', 'Authentication is required: present a valid bearer token or session cookie')

/** A resolved PAT as the cache keeps it: the row's validity fields and the principal built from it once. */
export interface PatEntry {
  row: Pick<PatRow, 'id' | 'revoked_at' | 'expires_at' | 'user_status'>
  /** lastUsedAt is filled per request. */
  principal: Principal
  /** Epoch ms of the newest use this replica has seen: the next request's lastUsedAt. */
  lastUse: number | null
}

/** AppDeps satisfies this as it is, so the request path builds no deps object. */
export interface ResolveDeps {
  sql: Db
  lastUsed: LastUsedRecorder
  pats: CredentialCache<PatEntry>
}

/** A PAT found in this replica's cache resolves without a promise: the hot path of automation traffic. */
export function resolvePrincipal(deps: ResolveDeps, cred: { bearer?: string; cookie?: string }): Principal | Promise<Principal> {
  const token = cred.bearer ?? cred.cookie
  if (!token) throw unauthorized()
  if (token.startsWith(PAT_PREFIX)) {
    if (!cred.bearer) return patAsCookie(deps, token)
    const key = Bun.SHA256.hash(token, 'base64')
    const hit = deps.pats.get(key)
    // Only a miss that found no live row asks whether the token was retired: a valid token never pays for it.
    return hit ? usePat(deps, hit) : lookupPat(deps, key).then((entry) => (entry ? usePat(deps, entry) : refuseUnknown(deps, Buffer.from(key, 'base64'))))
  }
  if (token.startsWith(SESSION_PREFIX)) return resolveSession(deps, token, cred.bearer === undefined)
  throw unauthorized()
}

// Interface rule: a TOKEN_* code only when the digest matched a stored record; anything else is UNAUTHORIZED,
// so the answers cannot be used to probe which tokens exist. TOKEN_NOT_FOUND: the digest is one we stored and whose
// record was since destroyed (retired_credentials, migrations/0090). TOKEN_MALFORMED: the digest is a live record's,
// but the token came in a form we never accept for it (a PAT as the session cookie).

async function refuseUnknown(deps: ResolveDeps, digest: Buffer): Promise<never> {
  if (await isRetired(deps.sql, digest)) {
    throw new ApiError('TOKEN_NOT_FOUND', "This token's record no longer exists (its tenant or account was deleted); create or sign in for a new one")
  }
  throw unauthorized()
}

async function patAsCookie(deps: ResolveDeps, token: string): Promise<never> {
  const digest = sha256(token)
  if (await findPatByHash(deps.sql, digest)) {
    throw new ApiError('TOKEN_MALFORMED', 'A personal access token is sent as "Authorization: Bearer <token>", never as the session cookie')
  }
  return refuseUnknown(deps, digest)
}

function usePat(deps: ResolveDeps, entry: PatEntry): Principal {
  const { row } = entry
  const now = Date.now()
  if (row.revoked_at) throw new ApiError('TOKEN_REVOKED', 'This personal access token has been revoked')
  if (row.expires_at.getTime() <= now) throw new ApiError('TOKEN_EXPIRED', 'This personal access token has expired')
  if (row.user_status !== 'active') throw unauthorized()
  const previous = entry.lastUse
  entry.lastUse = now
  deps.lastUsed.record(row.id, now)
  return { ...entry.principal, lastUsedAt: previous === null ? null : new Date(previous) }
}

/** Only found tokens are kept, so a new token is usable on every replica the moment it exists. */
async function lookupPat(deps: ResolveDeps, key: string): Promise<PatEntry | undefined> {
  const generation = deps.pats.generation
  const row = await findPatByHash(deps.sql, Buffer.from(key, 'base64'))
  if (!row) return undefined
  // Frozen: one principal serves every request of this entry, so no route may change it in place.
  const membership: Membership = Object.freeze({
    id: row.membership_id,
    tenantId: row.tenant_id,
    role: row.role,
    status: row.membership_status,
    expiresAt: row.membership_expires_at,
    standing: Object.freeze({
      lifecycle: row.tenant_lifecycle,
      billingBlock: Object.freeze(blockReasonsOf(row.subscription_status, row.operator_blocked)),
    }),
  })
  const principal: Principal = Object.freeze({
    credential: 'personal_access_token',
    credentialId: row.id,
    userId: row.user_id,
    label: row.name,
    membership,
    grantCeiling: Object.freeze(row.scopes) as string[],
    permissions: Object.freeze(row.project_id === null ? effectivePermissions(row.role, row.scopes) : projectTokenPermissions(row, true)) as Permission[],
    project: row.project_id === null ? null : projectBinding(row),
    expiresAt: row.expires_at,
    lastUsedAt: null,
    viaCookie: false,
    mfa: 'satisfied',
    authentication: null,
  })
  const index = { apiKeyId: row.id, membershipId: row.membership_id, userId: row.user_id, tenantId: row.tenant_id }
  return deps.pats.fill(key, index, { row, principal, lastUse: row.last_used_at?.getTime() ?? null }, generation)
}

/** A project token's scopes ∩ what its member holds in the project: with the project membership (`live`) or
 *  without it (none, or expired). */
function projectTokenPermissions(row: PatRow, live: boolean): Permission[] {
  const member = live && row.project_role !== null ? { role: row.project_role, grant: row.project_grant ?? [], deny: row.project_deny ?? [] } : null
  return projectPermissions(row.role, member).filter((p) => row.scopes.includes(p))
}

const projectBinding = (row: PatRow): ProjectBinding =>
  Object.freeze({
    id: row.project_id!,
    expiresAt: row.project_role === null ? null : row.project_expires_at,
    afterExpiry: Object.freeze(projectTokenPermissions(row, false)) as Permission[],
  })

async function resolveSession(deps: ResolveDeps, token: string, viaCookie: boolean): Promise<Principal> {
  const digest = sha256(token)
  const row = await findSessionByHash(deps.sql, digest)
  if (!row) return refuseUnknown(deps, digest)
  const now = Date.now()
  if (row.revoked_at) throw new ApiError('TOKEN_REVOKED', 'This session has been signed out')
  const idleDeadline = row.last_seen_at.getTime() + row.idle_timeout_seconds * 1000
  if (row.expires_at.getTime() <= now || idleDeadline <= now) throw new ApiError('SESSION_EXPIRED', 'This session has expired; sign in again')
  if (row.user_status === 'disabled') throw unauthorized()
  await touchSession(deps.sql, row.id)
  const membership: Membership | null =
    row.membership_id && row.tenant_id && row.role
      ? {
          id: row.membership_id,
          tenantId: row.tenant_id,
          role: row.role,
          status: row.membership_status ?? 'removed',
          expiresAt: row.membership_expires_at,
          standing: { lifecycle: row.tenant_lifecycle ?? 'active', billingBlock: blockReasonsOf(row.subscription_status, row.operator_blocked) },
        }
      : null
  return {
    credential: 'session',
    credentialId: row.id,
    userId: row.user_id,
    label: row.email,
    membership,
    grantCeiling: null,
    permissions: membership ? effectivePermissions(membership.role, null) : [],
    expiresAt: new Date(Math.min(row.expires_at.getTime(), idleDeadline)),
    lastUsedAt: row.last_seen_at,
    viaCookie,
    mfa: row.mfa_pending ? 'challenge' : row.tenant_mfa_required && !row.has_second_factor ? 'enrolment' : 'satisfied',
    passwordChangeRequired: row.password_change_required,
    authentication: {
      method: row.auth_method,
      ssoConnectionId: row.sso_connection_id,
      secondFactorAt: row.second_factor_at,
      authenticatedAt: row.authenticated_at,
    },
  }
}

/** Whether a tenant id a request names (the tenant header) is a deleted tenant's: its tombstone (migrations/0090). */
export const namedTenantDeleted = (deps: Pick<ResolveDeps, 'sql'>, tenantId: string): Promise<boolean> => isTenantDeleted(deps.sql, tenantId)
