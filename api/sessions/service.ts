import type { Config } from '../platform/config'
import type { Db, Sql } from '../platform/db'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { verifyPassword } from '../identity/passwords'
import type { Principal } from '../identity/service'
import { newSessionToken } from '../identity/tokens'
import { findUserByEmail, listUserMemberships } from '../users/queries'
import { getAuthPolicy } from '../auth-policy/service'
import { openMfaChallenge, pendingSecondFactors, type MfaChallenge, type SessionState } from '../mfa/challenges'
import { passwordSignInMembership, sessionLifetimes } from './lifetimes'
import { insertSession, listLiveSessions, revokeOtherSessions, revokeSession, switchSessionMembership } from './queries'
import type { SignInThrottle } from '../identity/sign-in-throttle'

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

/** Lucia-style: a random token the client keeps, its SHA-256 the only thing stored. A user with a second factor
 *  gets a gated session and a challenge, unless the session is opened by that factor itself (a passkey). */
export async function startSession(db: Db, config: Config, userId: string, membershipId: string | null, ctx: SessionContext,
  opts: { secondFactorVerified?: boolean; passwordChangeRequired?: boolean } = {}): Promise<NewSession> {
  const { token, hash } = newSessionToken()
  const factors = opts.secondFactorVerified ? null : await pendingSecondFactors(db, userId)
  const row = await insertSession(db, {
    userId, tokenHash: hash, membershipId, userAgent: ctx.userAgent?.slice(0, 512) ?? null, ip: ctx.ip,
    ...(await sessionLifetimes(db, config, membershipId)), mfaPending: factors !== null, passwordChangeRequired: opts.passwordChangeRequired,
  })
  const session = { id: row.id, token, expiresAt: row.expires_at }
  if (factors) return { ...session, state: 'mfa_required', mfaChallenge: await openMfaChallenge(db, config, userId, row.id, factors) }
  return { ...session, state: await enrolmentState(db, userId, membershipId, opts.secondFactorVerified === true) }
}

/** A member of a tenant whose policy requires MFA, without any second factor, may only enrol one. */
async function enrolmentState(db: Db, userId: string, membershipId: string | null, hasFactor: boolean): Promise<SessionState> {
  if (hasFactor || !membershipId) return 'active'
  const m = (await listUserMemberships(db, userId)).find((x) => x.id === membershipId)
  return m && (await getAuthPolicy(db, m.tenant_id)).policy.mfaRequired ? 'mfa_enrolment_required' : 'active'
}

/** The caller's live sessions, newest first; the one making the request is marked current. */
export async function listSessions(db: Db, pageKey: Buffer, principal: Principal, params: PageParams) {
  const current = currentSessionOf(principal)
  const binding = { route: 'GET /users/me/sessions', scope: `user:${principal.userId}`, filters: {} }
  const p = await paginate(pageKey, binding, params, (after, limit) => listLiveSessions(db, principal.userId, after, limit), createdCursorOf)
  return mapPage(p, (r) => ({
    id: r.id,
    current: r.id === current,
    userAgent: r.user_agent,
    ip: r.ip,
    createdAt: r.created_at.toISOString(),
    lastSeenAt: r.last_seen_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
  }))
}

/** Same answer and the same argon2 cost whether the email is unknown or the password is wrong. Failures are
 *  throttled per account and per address (`throttle`). The session lands in the first active membership whose
 *  tenant admits passwords, with that tenant's lifetimes. */
export async function signIn(sql: Sql, config: Config, input: { email: string; password: string }, ctx: SessionContext, throttle?: SignInThrottle) {
  const ip = ctx.ip ?? 'unknown'
  await throttle?.admit(input.email, ip)
  const user = await findUserByEmail(sql, input.email)
  const valid = await verifyPassword(input.password, user?.password_hash)
  if (user?.status === 'activation_required') {
    throttle?.failed(input.email, ip)
    throw new ApiError('ACTIVATION_REQUIRED', 'This account is not activated yet: follow the link in the invitation mail to choose a password')
  }
  if (!user || !valid || user.status !== 'active') {
    throttle?.failed(input.email, ip)
    throw new ApiError('UNAUTHORIZED', 'Email or password is incorrect')
  }
  throttle?.succeeded(input.email)
  const { membershipId, blocked } = await passwordSignInMembership(sql, config, await listUserMemberships(sql, user.id))
  if (blocked) throw new ApiError('UNAUTHORIZED', 'Your organisation does not allow password sign-in: use single sign-on or a passkey')
  const session = await startSession(sql, config, user.id, membershipId, ctx, { passwordChangeRequired: user.password_change_required })
  return { user, membershipId, session }
}

export async function endSession(db: Db, sessionId: string, userId: string): Promise<void> {
  await revokeSession(db, sessionId, userId)
}

const currentSessionOf = (p: Principal) => (p.credential === 'session' ? p.credentialId : null)

/** DELETE /sessions/{id}: signs out one other device of the caller. Another user's session, an unknown id and
 *  an already ended one are all SESSION_NOT_FOUND, so ids of other users cannot be probed. */
export async function revokeOwnSession(db: Db, principal: Principal, sessionId: string): Promise<void> {
  if (sessionId === currentSessionOf(principal)) {
    throw new ApiError('CURRENT_SESSION_NOT_REVOCABLE', 'This is the session making the request: sign out with DELETE /v1/sessions/current')
  }
  if (!isUuid(sessionId) || !(await revokeSession(db, sessionId, principal.userId))) {
    throw new ApiError('SESSION_NOT_FOUND', 'You have no live session with this id')
  }
}

/** Ends every session of the caller but the one making the request (all of them for a PAT). */
export async function invalidateOtherSessions(db: Db, principal: Principal) {
  return { invalidated: await revokeOtherSessions(db, principal.userId, currentSessionOf(principal)) }
}

/** Ends every session of the caller, this one included ("sign out everywhere"). */
export async function invalidateAllSessions(db: Db, principal: Principal) {
  return { invalidated: await revokeOtherSessions(db, principal.userId, null) }
}

/** Moves the current session to another of the caller's memberships, under that tenant's lifetimes. */
export async function switchCurrentMembership(db: Db, config: Config, principal: Principal, membershipId: string): Promise<string> {
  if (principal.credential !== 'session') throw new ApiError('BAD_REQUEST', 'A personal access token is bound to its membership; only a session can switch')
  const m = isUuid(membershipId) ? (await listUserMemberships(db, principal.userId)).find((x) => x.id === membershipId) : undefined
  if (!m) throw new ApiError('MEMBERSHIP_NOT_FOUND', 'You have no membership with this id')
  if (m.status === 'disabled') throw new ApiError('MEMBERSHIP_DISABLED', 'That membership is disabled')
  if (m.status === 'expired') throw new ApiError('MEMBERSHIP_EXPIRED', 'That membership has expired')
  const lifetimes = await sessionLifetimes(db, config, m.id)
  await switchSessionMembership(db, { sessionId: principal.credentialId, userId: principal.userId, membershipId: m.id, ...lifetimes })
  return m.id
}
