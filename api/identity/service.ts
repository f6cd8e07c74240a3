import { ApiError } from '../platform/errors'
import { roleWithinReach, type Permission, type Role } from './permissions'
import type { TenantStanding } from './standing'

export type CredentialClass = 'session' | 'personal_access_token'

export interface Membership {
  id: string
  tenantId: string
  role: Role
  status: string
  expiresAt: Date | null
  /** The tenant's standing as the credential was read (the new-work gate's input, api/identity/standing.ts). */
  standing: TenantStanding
}

export interface SessionAuthentication {
  method: 'password' | 'passkey' | 'sso'
  /** The connection of an SSO sign-in. */
  ssoConnectionId: string | null
  /** When a second factor (or a passkey, which is both) was last verified in this session. */
  secondFactorAt: Date | null
  /** When the user last proved their presence in this session (sign-in, second factor, re-authentication). */
  authenticatedAt: Date
}

/** Who is calling, resolved once per request by the auth plugin. */
export interface Principal {
  credential: CredentialClass
  credentialId: string
  userId: string
  /** Who the audit trail says acted, read with the credential: the account's email for a session, the token's name
   *  for a PAT (a cached PAT is evicted when its name changes, migrations/0026). */
  label: string
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
  /** How a session was authenticated; null for a PAT. */
  authentication: SessionAuthentication | null
  /** A session of an account whose initial password must be changed first (INITIAL_PASSWORD_REQUIRED). */
  passwordChangeRequired?: boolean
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

/** The principal's current membership if it is usable (what requireActiveMembership admits), else null: checked
 *  once as a request is admitted, for its context (api/identity/context.ts tenantOf). */
export function usableMembership(p: Principal): Membership | null {
  const m = p.membership
  if (m?.status !== 'active' || (m.expiresAt && m.expiresAt.getTime() <= Date.now())) return null
  return m
}

export function requirePermission(p: Principal, anyOf: readonly Permission[]): void {
  if (anyOf.some((perm) => p.permissions.includes(perm))) return
  const list = anyOf.join(', ')
  throw new ApiError('PERMISSION_DENIED', anyOf.length > 1 ? `This operation requires any of: ${list}` : `This operation requires ${list}`)
}

/** No path grants a role above the caller's own (docs/security.md "Security model"): provisioning, invitations, membership
 *  changes. `held` defaults to the principal's permissions; a caller re-read under a lock passes its fresh ones. */
export function requireRoleWithinReach(p: Principal, role: Role, held: readonly Permission[] = p.permissions): void {
  if (!roleWithinReach(role, held)) {
    throw new ApiError('INVALID_ROLE_TRANSITION', `The ${role} role carries permissions you do not hold; only someone who holds all of them can grant it`)
  }
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
