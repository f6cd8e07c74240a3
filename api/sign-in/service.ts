import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import type { RequestContext } from '../identity/context'
import { verifyPassword } from '../identity/passwords'
import type { SignInThrottle } from '../identity/sign-in-throttle'
import { recordAudit } from '../audit/service'
import { listUserMemberships } from '../memberships/queries'
import { checkSecondFactor, type SecondFactorAnswer } from '../mfa/service'
import { findWebAuthnCredential, markMfaChallengeConfirmed, releaseMfaChallengeAttempt, reserveMfaChallengeAttempt } from '../mfa/queries'
import { verifyPasswordlessAssertion } from '../mfa/webauthn'
import { liftSessionMfaGate, type AuthMethod } from '../sessions/queries'
import { findUserByEmail } from '../users/queries'
import { findSigner, landingMembership, moveSessionInto, refusal } from './policy'
import { startSession, type NewSession, type SessionOptions } from './session-start'

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'keys'>

/** Wrong answers a sign-in challenge takes before it is burnt: with a 6-digit code and two live steps, a guesser
 *  has 10 in a million per password typed, and the password attempts are throttled on their own. */
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5

/** Why a sign-in was refused, as the account's security activity shows it (the catalogue's user.sign_in_failed
 *  lists them). Single sign-on adds its own: the callback's state was unknown, used or expired; the connection is
 *  disabled; the provider failed the exchange; it vouched for no email address; the address is outside the
 *  connection's domains; the address or identity belongs to an account that must link it first. */
export type SignInFailure =
  | 'invalid_credentials'
  | 'throttled'
  | 'not_active'
  | 'method_not_allowed'
  | 'state_invalid'
  | 'connection_disabled'
  | 'provider_failed'
  | 'email_unverified'
  | 'domain_not_covered'
  | 'link_required'

/** A refused sign-in, written with the pool so the error the request then answers cannot roll it back. The subject
 *  is the account when the attempt names one; an unknown address leaves no subject and never the address itself,
 *  and being an account action it is in no tenant's log (it would tell a tenant which addresses exist). */
export async function recordSignInFailure(
  db: Db,
  ctx: RequestContext<null>,
  method: AuthMethod,
  reason: SignInFailure,
  userId: string | undefined,
  details: Record<string, unknown> = {},
) {
  await recordAudit(db, ctx, {
    action: 'user.sign_in_failed',
    subjectUserId: userId ?? null,
    target: userId ? { type: 'user', id: userId } : null,
    outcome: 'failure',
    reason,
    details: { method, ...details },
  })
}

/** Opens the session and records the sign-in in one statement: a session exists exactly when its entry does. */
export async function openAuditedSession(
  db: Db,
  deps: Deps,
  ctx: RequestContext<null>,
  userId: string,
  membershipId: string | null,
  opts: Omit<SessionOptions, 'entry'>,
): Promise<NewSession> {
  return startSession(db, deps, userId, membershipId, ctx, {
    ...opts,
    entry: (session) => ({
      action: 'user.signed_in',
      actorUserId: userId,
      target: { type: 'session', id: session.id },
      details: { method: opts.method, membershipId, state: session.state, ...(opts.ssoConnectionId ? { ssoConnectionId: opts.ssoConnectionId } : {}) },
    }),
  })
}

/** Same answer and the same argon2 cost whether the email is unknown or the password is wrong. Failures are
 *  throttled per account and per address (`throttle`) and recorded (the same one write either way). The session
 *  lands in the first active membership whose tenant admits passwords, with that tenant's lifetimes. */
export async function signInWithPassword(
  deps: Deps & { signInThrottle?: SignInThrottle },
  ctx: RequestContext<null>,
  input: { email: string; password: string },
) {
  const throttle = deps.signInThrottle
  const ip = ctx.ip ?? 'unknown'
  const failed = (reason: SignInFailure, userId: string | undefined) => recordSignInFailure(deps.sql, ctx, 'password', reason, userId)
  try {
    await throttle?.admit(input.email, ip)
  } catch (err) {
    await failed('throttled', (await findUserByEmail(deps.sql, input.email))?.id)
    throw err
  }
  // Everything a sign-in needs is read with the account (one round trip), before its password is known to match:
  // reading it only after would cost each sign-in a round trip more. An unknown address pays the same argon2id.
  const who = await findSigner(deps.sql, deps, { email: input.email })
  const user = who?.user
  const valid = await verifyPassword(input.password, user?.password_hash)
  if (user?.status === 'activation_required') {
    throttle?.failed(input.email, ip)
    await failed('not_active', user.id)
    throw new ApiError('ACTIVATION_REQUIRED', 'This account is not activated yet: follow the link in the invitation mail to choose a password')
  }
  if (!who || !user || !valid || user.status !== 'active') {
    throttle?.failed(input.email, ip)
    await failed(user && valid ? 'not_active' : 'invalid_credentials', user?.id)
    throw new ApiError('UNAUTHORIZED', 'Email or password is incorrect')
  }
  throttle?.succeeded(input.email)
  const { membershipId, policy, blocked } = landingMembership(deps, who, 'password')
  if (blocked) {
    await failed('method_not_allowed', user.id)
    throw new ApiError('UNAUTHORIZED', 'Your organisation does not allow password sign-in: use single sign-on or a passkey')
  }
  const session = await openAuditedSession(deps.sql, deps, ctx, user.id, membershipId, {
    method: 'password',
    passwordChangeRequired: user.password_change_required,
    known: { factors: who.factors, policy },
  })
  return { who, membershipId, session }
}

/** A discoverable passkey with user verification is both factors at once: the session starts ungated. A refused
 *  assertion is recorded against the account whose credential it names, if any. */
export async function signInWithPasskey(deps: Deps, ctx: RequestContext<null>, assertion: unknown) {
  const response = assertion as AuthenticationResponseJSON
  const cred = await verifyPasswordlessAssertion(deps.sql, deps.config, response)
  const who = cred ? await findSigner(deps.sql, deps, { id: cred.user_id }) : undefined
  const user = who?.user
  const failed = (reason: SignInFailure, userId: string | undefined) => recordSignInFailure(deps.sql, ctx, 'passkey', reason, userId)
  if (!who || user?.status !== 'active') {
    const named = typeof response?.id === 'string' ? await findWebAuthnCredential(deps.sql, response.id) : undefined
    await failed(user ? 'not_active' : 'invalid_credentials', user?.id ?? named?.user_id)
    throw new ApiError('UNAUTHORIZED', 'This passkey was not accepted')
  }
  const { membershipId, policy, blocked } = landingMembership(deps, who, 'passkey')
  if (blocked) {
    await failed('method_not_allowed', user.id)
    throw new ApiError('UNAUTHORIZED', 'Your organisation does not allow passkey sign-in: use single sign-on')
  }
  const session = await openAuditedSession(deps.sql, deps, ctx, user.id, membershipId, {
    method: 'passkey',
    secondFactorVerified: true,
    known: { factors: who.factors, policy },
  })
  return { who, membershipId, session }
}

const challengeFailed = () => new ApiError('UNAUTHORIZED', 'The second factor was not accepted')

/** Lifts the gate of the session the challenge belongs to. Each answer takes one of the challenge's attempts before
 *  it is checked, so parallel answers cannot check more than the limit; an unknown, expired, answered or burnt
 *  challenge answers the same 401 as a wrong code. Every refused answer is recorded (with the pool, so the 401
 *  keeps it); the passed one in the transaction that lifts the gate. */
export async function confirmChallenge(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'keys'>,
  ctx: RequestContext<null>,
  input: SecondFactorAnswer & { challengeId: string },
) {
  const ch = await reserveMfaChallengeAttempt(deps.sql, input.challengeId, MFA_CHALLENGE_MAX_ATTEMPTS)
  const failed = (reason: 'challenge_invalid' | 'invalid_code' | 'throttled') =>
    recordAudit(deps.sql, ctx, {
      action: 'user.mfa_challenge_failed',
      subjectUserId: ch?.user_id ?? null,
      target: ch ? { type: 'session', id: ch.session_id } : null,
      outcome: 'failure',
      reason,
      details: { method: input.method },
    })
  if (!ch) {
    await failed('challenge_invalid')
    throw new ApiError('UNAUTHORIZED', 'This challenge is unknown, expired, already answered or burnt by wrong answers; sign in again')
  }
  let ok: boolean
  try {
    ok = await checkSecondFactor(deps, ch.user_id, input, ch.webauthn_challenge)
  } catch (err) {
    // The account's failure budget refused it unchecked: that costs the challenge no attempt.
    if (err instanceof ApiError && err.code === 'RATE_LIMITED') {
      await releaseMfaChallengeAttempt(deps.sql, ch.id)
      await failed('throttled')
    }
    throw err
  }
  if (!ok) {
    await failed('invalid_code')
    throw challengeFailed()
  }
  // The challenge is spent and the gate lifted together, once.
  const membershipId = await deps.sql.begin(async (tx) => {
    const sessionId = await markMfaChallengeConfirmed(tx, ch.id)
    const lifted = sessionId ? await liftSessionMfaGate(tx, sessionId) : undefined
    if (!lifted) throw challengeFailed()
    await recordAudit(tx, ctx, {
      action: 'user.mfa_challenge_passed',
      actorUserId: ch.user_id,
      target: { type: 'session', id: ch.session_id },
      details: { method: input.method },
    })
    return lifted.membership_id
  })
  return { userId: ch.user_id, membershipId }
}

/** Moves the current session to another of the caller's memberships when that tenant's policy admits the way the
 *  session authenticated (api/sign-in/policy.ts), under that tenant's lifetimes; the move and its entry commit
 *  together. */
export async function switchCurrentMembership(deps: Deps, ctx: RequestContext, membershipId: string): Promise<string> {
  const { principal } = ctx
  if (principal.credential !== 'session') throw new ApiError('BAD_REQUEST', 'A personal access token is bound to its membership; only a session can switch')
  const m = isUuid(membershipId) ? (await listUserMemberships(deps.sql, principal.userId)).find((x) => x.id === membershipId) : undefined
  if (!m) throw new ApiError('MEMBERSHIP_NOT_FOUND', 'You have no membership with this id')
  if (m.status === 'disabled') throw new ApiError('MEMBERSHIP_DISABLED', 'That membership is disabled')
  if (m.status === 'expired') throw new ApiError('MEMBERSHIP_EXPIRED', 'That membership has expired')
  return deps.sql.begin(async (tx) => {
    const verdict = await moveSessionInto(tx, deps, principal, { id: m.id, tenantId: m.tenant_id })
    if (verdict !== 'admitted') throw refusal(verdict)
    await recordAudit(tx, ctx, {
      action: 'session.tenant_switched',
      target: { type: 'membership', id: m.id },
      details: {
        sessionId: principal.credentialId,
        tenantId: m.tenant_id,
        fromMembershipId: principal.membership?.id ?? null,
        fromTenantId: principal.membership?.tenantId ?? null,
      },
    })
    return m.id
  })
}
