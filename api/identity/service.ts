import { ApiError } from '../platform/errors'
import { ROLE_PERMISSIONS, roleWithinReach, type Permission, type Role } from './permissions'
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

/** A project-scoped PAT's project: the token acts there and nowhere else. */
export interface ProjectBinding {
  id: string
  /** When the member's membership in the project ends (null: it does not, or there is none). */
  expiresAt: Date | null
  /** The token's permissions once that membership has expired: its scopes ∩ the tenant role's project points. */
  afterExpiry: Permission[]
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
  /** Set for a project-scoped PAT; its `permissions` are then what it holds in that project while the membership
   *  lasts (read them with currentPermissions, which compares the expiry on every call). */
  project?: ProjectBinding | null
}

/** The principal's permissions now: a project token's shrink the instant its project membership expires, whatever
 *  cache holds the principal. */
export function currentPermissions(p: Principal, now = Date.now()): Permission[] {
  const bound = p.project
  return bound?.expiresAt && bound.expiresAt.getTime() <= now ? bound.afterExpiry : p.permissions
}

/** A project-scoped PAT on an operation that is not project-scoped: the token does not declare the tenant as its
 *  reach (PERMISSION_NOT_DECLARED) when its member's role would allow the operation, else PERMISSION_DENIED. */
export function refuseOutsideProject(p: Principal, anyOf: readonly Permission[]): never {
  const role = p.membership?.role
  const list = anyOf.join(', ')
  if (role !== undefined && anyOf.some((perm) => ROLE_PERMISSIONS[role].includes(perm))) {
    throw new ApiError('PERMISSION_NOT_DECLARED', `This token acts only inside project ${p.project!.id}; this operation is tenant-wide (${list})`)
  }
  throw new ApiError('PERMISSION_DENIED', `This operation requires ${anyOf.length > 1 ? `any of: ${list}` : list}`)
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

/** PERMISSION_NOT_DECLARED when the member's role gives one of the points but the PAT's scopes declare none of them
 *  (the token was made narrower than its member); PERMISSION_DENIED when the role gives none. */
export function requirePermission(p: Principal, anyOf: readonly Permission[]): void {
  if (anyOf.some((perm) => p.permissions.includes(perm))) return
  const list = anyOf.join(', ')
  const needs = anyOf.length > 1 ? `any of: ${list}` : list
  const role = p.membership?.role
  if (p.grantCeiling !== null && role !== undefined && anyOf.some((perm) => ROLE_PERMISSIONS[role].includes(perm))) {
    throw new ApiError('PERMISSION_NOT_DECLARED', `This token's scopes do not declare ${needs}, which this operation requires and your role gives`)
  }
  throw new ApiError('PERMISSION_DENIED', `This operation requires ${needs}`)
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
