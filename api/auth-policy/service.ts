import { staleVersion } from '../platform/etag'
import type { Config } from '../platform/config'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { domainOfEmail } from '../platform/email'
import { ApiError } from '../platform/errors'
import { tenantOf, type RequestContext } from '../identity/context'
import { changesBetween, recordAudit } from '../audit/service'
import { PASSWORD_MIN_LENGTH_FLOOR, SIGN_IN_METHODS, type AuthPolicyPatch, type TenantAuthPolicy } from './model'
import { findAuthPoliciesOfUser, findAuthPolicy, insertDefaultAuthPolicy, updateAuthPolicy, type AuthPolicyRow } from './queries'

/** The configured session lifetimes stand in for a tenant that never changed its policy. */
export type SessionDefaults = Pick<Config, 'SESSION_ABSOLUTE_HOURS' | 'SESSION_IDLE_MINUTES'>

type PolicyFields = Omit<AuthPolicyRow, 'tenant_id' | 'version' | 'updated_at'>

const defaultFields = (s: SessionDefaults): PolicyFields => ({
  mfa_required: false,
  allowed_sign_in_methods: [...SIGN_IN_METHODS],
  password_min_length: PASSWORD_MIN_LENGTH_FLOOR,
  session_absolute_minutes: s.SESSION_ABSOLUTE_HOURS * 60,
  session_idle_minutes: s.SESSION_IDLE_MINUTES,
  sso_enforced: false,
  allowed_email_domains: [],
})

const toDto = (tenantId: string, f: PolicyFields, updatedAt: Date | null): TenantAuthPolicy => ({
  tenantId,
  mfaRequired: f.mfa_required,
  allowedSignInMethods: f.allowed_sign_in_methods as TenantAuthPolicy['allowedSignInMethods'],
  passwordMinLength: f.password_min_length,
  sessionAbsoluteMinutes: f.session_absolute_minutes,
  sessionIdleMinutes: f.session_idle_minutes,
  ssoEnforced: f.sso_enforced,
  allowedEmailDomains: f.allowed_email_domains,
  updatedAt: updatedAt?.toISOString() ?? null,
})

/** A tenant's policy, or the defaults (version 1) when it never changed it. For every domain that enforces it:
 *  sign-in methods, session lifetimes, password length, email domains, MFA. */
export async function getAuthPolicy(db: Db, tenantId: string, sessions: SessionDefaults): Promise<{ policy: TenantAuthPolicy; version: number }> {
  const row = await findAuthPolicy(db, tenantId)
  return { policy: policyOf(tenantId, row, sessions), version: row?.version ?? 1 }
}

/** The policy a tenant's row says, or the defaults without one: for a caller that read the row with more. */
export const policyOf = (tenantId: string, row: AuthPolicyRow | undefined, sessions: SessionDefaults): TenantAuthPolicy =>
  row ? toDto(tenantId, row, row.updated_at) : toDto(tenantId, defaultFields(sessions), null)

/** The current tenant's policy, for its administrators. */
export async function currentAuthPolicy({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext) {
  return getAuthPolicy(sql, tenantOf(ctx).tenantId, config)
}

/** The strictest minimum length over every tenant the user is an active member of (the floor without any). */
export async function passwordMinLengthFor(db: Db, userId: string): Promise<number> {
  const rows = await findAuthPoliciesOfUser(db, userId)
  return Math.max(PASSWORD_MIN_LENGTH_FLOOR, ...rows.map((r) => r.password_min_length))
}

/** An empty list admits any address; otherwise the address's domain must be listed exactly. */
export const emailDomainAllowed = (p: Pick<TenantAuthPolicy, 'allowedEmailDomains'>, email: string) =>
  p.allowedEmailDomains.length === 0 || p.allowedEmailDomains.includes(domainOfEmail(email))

const POLICY_FIELDS = [
  'mfaRequired',
  'allowedSignInMethods',
  'passwordMinLength',
  'sessionAbsoluteMinutes',
  'sessionIdleMinutes',
  'ssoEnforced',
  'allowedEmailDomains',
] as const

export async function patchAuthPolicy(
  { sql, config }: Pick<ServiceDeps, 'sql' | 'config'>,
  ctx: RequestContext,
  expectedVersion: number | null,
  patch: AuthPolicyPatch,
) {
  const { tenantId } = tenantOf(ctx)
  return sql.begin(async (tx) => {
    await insertDefaultAuthPolicy(tx, tenantId, defaultFields(config))
    const current = (await findAuthPolicy(tx, tenantId))!
    const next: PolicyFields = {
      mfa_required: patch.mfaRequired ?? current.mfa_required,
      allowed_sign_in_methods: patch.allowedSignInMethods ? [...new Set(patch.allowedSignInMethods)] : current.allowed_sign_in_methods,
      password_min_length: patch.passwordMinLength ?? current.password_min_length,
      session_absolute_minutes: patch.sessionAbsoluteMinutes ?? current.session_absolute_minutes,
      session_idle_minutes: patch.sessionIdleMinutes ?? current.session_idle_minutes,
      sso_enforced: patch.ssoEnforced ?? current.sso_enforced,
      allowed_email_domains: patch.allowedEmailDomains ? [...new Set(patch.allowedEmailDomains)] : current.allowed_email_domains,
    }
    if (next.session_idle_minutes > next.session_absolute_minutes) {
      throw new ApiError('VALIDATION_ERROR', 'sessionIdleMinutes cannot exceed sessionAbsoluteMinutes', {
        errors: [{ path: 'body.sessionIdleMinutes', message: 'must be at most sessionAbsoluteMinutes' }],
      })
    }
    const row = await updateAuthPolicy(tx, tenantId, expectedVersion, next)
    if (!row) throw staleVersion('policy')
    const policy = toDto(tenantId, row, row.updated_at)
    const changes = changesBetween(toDto(tenantId, current, current.updated_at), policy, POLICY_FIELDS)
    if (changes) await recordAudit(tx, ctx, { action: 'auth_policy.updated', tenantId, target: { type: 'auth_policy', id: tenantId }, changes })
    return { policy, version: row.version }
  })
}
