import { sha256 } from '../platform/crypto'
import type { Db } from '../platform/db'
import { ApiError } from '../platform/errors'
import type { CredentialCache } from './credential-cache'
import type { LastUsedRecorder } from './last-used'
import { effectivePermissions, type Permission, type Role } from './permissions'
import { findPatByHash, findSessionByHash, touchSession, type PatRow } from './queries'
import { PAT_PREFIX, SESSION_PREFIX } from './tokens'

export type CredentialClass = 'session' | 'personal_access_token'

export interface Membership {
  id: string
  tenantId: string
  role: Role
  status: string
  expiresAt: Date | null
}

/** Who is calling, resolved once per request by the auth plugin. */
export interface Principal {
  credential: CredentialClass
  credentialId: string
  userId: string
  membership: Membership | null
  /** The PAT's scopes (its grant ceiling); null for a session. */
  grantCeiling: string[] | null
  permissions: Permission[]
  expiresAt: Date
  lastUsedAt: Date | null
  /** true when the session came from the cookie: unsafe methods then need the CSRF header. */
  viaCookie: boolean
  /** Second-factor gate of a session: 'challenge' until its sign-in challenge is answered; 'enrolment' while the
   *  tenant requires MFA and the user has no second factor. Always 'satisfied' for a PAT. */
  mfa: 'satisfied' | 'challenge' | 'enrolment'
  /** A session of an account whose initial password must be changed first (INITIAL_PASSWORD_REQUIRED). */
  passwordChangeRequired?: boolean
}

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
  if (token.startsWith(PAT_PREFIX) && cred.bearer) {
    const key = Bun.SHA256.hash(token, 'base64')
    const hit = deps.pats.get(key)
    return hit ? usePat(deps, hit) : lookupPat(deps, key).then((entry) => usePat(deps, entry))
  }
  if (token.startsWith(SESSION_PREFIX)) return resolveSession(deps, token, cred.bearer === undefined)
  throw unauthorized()
}

// Interface rule: a TOKEN_* code only when the digest matched a stored record; anything else is UNAUTHORIZED,
// so the answers cannot be used to probe which tokens exist.
function usePat(deps: ResolveDeps, entry: PatEntry | undefined): Principal {
  if (!entry) throw unauthorized()
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
    id: row.membership_id, tenantId: row.tenant_id, role: row.role, status: row.membership_status, expiresAt: row.membership_expires_at,
  })
  const principal: Principal = Object.freeze({
    credential: 'personal_access_token',
    credentialId: row.id,
    userId: row.user_id,
    membership,
    grantCeiling: Object.freeze(row.scopes) as string[],
    permissions: Object.freeze(effectivePermissions(row.role, row.scopes)) as Permission[],
    expiresAt: row.expires_at,
    lastUsedAt: null,
    viaCookie: false,
    mfa: 'satisfied',
  })
  const index = { apiKeyId: row.id, membershipId: row.membership_id, userId: row.user_id }
  return deps.pats.fill(key, index, { row, principal, lastUse: row.last_used_at?.getTime() ?? null }, generation)
}

async function resolveSession(deps: ResolveDeps, token: string, viaCookie: boolean): Promise<Principal> {
  const row = await findSessionByHash(deps.sql, sha256(token))
  if (!row) throw unauthorized()
  const now = Date.now()
  if (row.revoked_at) throw new ApiError('TOKEN_REVOKED', 'This session has been signed out')
  const idleDeadline = row.last_seen_at.getTime() + row.idle_timeout_seconds * 1000
  if (row.expires_at.getTime() <= now || idleDeadline <= now) throw new ApiError('SESSION_EXPIRED', 'This session has expired; sign in again')
  if (row.user_status === 'disabled') throw unauthorized()
  await touchSession(deps.sql, row.id)
  const membership: Membership | null =
    row.membership_id && row.tenant_id && row.role
      ? { id: row.membership_id, tenantId: row.tenant_id, role: row.role, status: row.membership_status ?? 'removed', expiresAt: row.membership_expires_at }
      : null
  return {
    credential: 'session',
    credentialId: row.id,
    userId: row.user_id,
    membership,
    grantCeiling: null,
    permissions: membership ? effectivePermissions(membership.role, null) : [],
    expiresAt: new Date(Math.min(row.expires_at.getTime(), idleDeadline)),
    lastUsedAt: row.last_seen_at,
    viaCookie,
    mfa: row.mfa_pending ? 'challenge' : row.tenant_mfa_required && !row.has_second_factor ? 'enrolment' : 'satisfied',
    passwordChangeRequired: row.password_change_required,
  }
}

/** The tenant-side checks a permission-bearing route needs: a current membership that is usable. */
export function requireActiveMembership(p: Principal, requestedTenant: string | undefined): Membership {
  const m = p.membership
  if (!m) throw new ApiError('TENANT_REQUIRED', 'This operation needs a current tenant: switch to a membership or use a token issued for a tenant')
  if (requestedTenant !== undefined && requestedTenant !== m.tenantId) {
    throw new ApiError('TENANT_CONTEXT_MISMATCH', 'The X-Tenant-Id header names a different tenant than the credential')
  }
  if (m.status === 'disabled') throw new ApiError('MEMBERSHIP_DISABLED', 'Your membership in this tenant is disabled')
  if (m.status === 'expired' || (m.expiresAt && m.expiresAt.getTime() <= Date.now())) {
    throw new ApiError('MEMBERSHIP_EXPIRED', 'Your membership in this tenant has expired')
  }
  if (m.status !== 'active') throw new ApiError('MEMBERSHIP_NOT_FOUND', 'You are no longer a member of this tenant')
  return m
}

export function requirePermission(p: Principal, anyOf: readonly Permission[]): void {
  if (anyOf.some((perm) => p.permissions.includes(perm))) return
  const list = anyOf.join(', ')
  throw new ApiError('PERMISSION_DENIED', anyOf.length > 1 ? `This operation requires any of: ${list}` : `This operation requires ${list}`)
}

/** The second-factor gate: a session answering its sign-in challenge reaches nothing; one whose tenant requires
 *  MFA but that has no second factor reaches only the enrolment routes. */
export function requireSecondFactor(p: Principal, enrolmentRoute: boolean): void {
  if (p.mfa === 'challenge') {
    throw new ApiError('MFA_REQUIRED', 'This session must answer its second-factor challenge (POST /v1/sessions/mfa-challenges/confirmations)')
  }
  if (p.mfa === 'enrolment' && !enrolmentRoute) {
    throw new ApiError('MFA_REQUIRED', 'Your tenant requires a second factor: enrol TOTP or a passkey before anything else')
  }
}
