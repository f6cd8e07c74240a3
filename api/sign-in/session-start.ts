import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { getAuthPolicy } from '../auth-policy/service'
import { newSessionToken } from '../identity/tokens'
import { listUserMemberships, tenantOfMembership } from '../memberships/queries'
import { openMfaChallenge, pendingSecondFactors, type MfaChallenge, type SessionState } from '../mfa/challenges'
import { insertSession, type AuthMethod } from '../sessions/queries'

type Deps = Pick<ServiceDeps, 'config'>

export interface SessionContext {
  userAgent: string | null
  ip: string | null
}

export interface NewSession {
  id: string
  token: string
  expiresAt: Date
  state: SessionState
  /** Set when state is mfa_required: what the client answers at POST /sessions/mfa-challenges/confirmations. */
  mfaChallenge?: MfaChallenge
}

/** A session's lifetimes: its tenant's auth policy, or the configured defaults without a tenant. */
export async function sessionLifetimes(tx: Db, deps: Deps, membershipId: string | null): Promise<{ absoluteSeconds: number; idleSeconds: number }> {
  const tenantId = membershipId ? await tenantOfMembership(tx, membershipId) : undefined
  const { policy } = tenantId ? await getAuthPolicy(tx, tenantId, deps.config) : { policy: undefined }
  if (!policy) return { absoluteSeconds: deps.config.SESSION_ABSOLUTE_HOURS * 3600, idleSeconds: deps.config.SESSION_IDLE_MINUTES * 60 }
  return { absoluteSeconds: policy.sessionAbsoluteMinutes * 60, idleSeconds: policy.sessionIdleMinutes * 60 }
}

/** Lucia-style: a random token the client keeps, its SHA-256 the only thing stored. A user with a second factor
 *  gets a gated session and a challenge, unless the session is opened by that factor itself (a passkey). */
export async function startSession(tx: Db, deps: Deps, userId: string, membershipId: string | null, ctx: SessionContext,
  opts: { method: AuthMethod; ssoConnectionId?: string; secondFactorVerified?: boolean; passwordChangeRequired?: boolean }): Promise<NewSession> {
  const { token, hash } = newSessionToken()
  const factors = opts.secondFactorVerified ? null : await pendingSecondFactors(tx, userId)
  const row = await insertSession(tx, {
    userId, tokenHash: hash, membershipId, userAgent: ctx.userAgent?.slice(0, 512) ?? null, ip: ctx.ip,
    ...(await sessionLifetimes(tx, deps, membershipId)), mfaPending: factors !== null, passwordChangeRequired: opts.passwordChangeRequired,
    // An SSO sign-in is no second factor of ours: it stands in for one only in its own tenant (policy.ts).
    authMethod: opts.method, ssoConnectionId: opts.ssoConnectionId, secondFactorVerified: opts.secondFactorVerified && opts.method !== 'sso',
  })
  const session = { id: row.id, token, expiresAt: row.expires_at }
  if (factors) return { ...session, state: 'mfa_required', mfaChallenge: await openMfaChallenge(tx, deps.config, userId, row.id, factors) }
  return { ...session, state: await enrolmentState(tx, deps, userId, membershipId, opts.secondFactorVerified === true) }
}

/** A member of a tenant whose policy requires MFA, without any second factor, may only enrol one. */
async function enrolmentState(tx: Db, deps: Deps, userId: string, membershipId: string | null, hasFactor: boolean): Promise<SessionState> {
  if (hasFactor || !membershipId) return 'active'
  const m = (await listUserMemberships(tx, userId)).find((x) => x.id === membershipId)
  return m && (await getAuthPolicy(tx, m.tenant_id, deps.config)).policy.mfaRequired ? 'mfa_enrolment_required' : 'active'
}
