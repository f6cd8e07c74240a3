import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { verifyPassword } from '../identity/passwords'
import type { Principal } from '../identity/service'
import type { SignInThrottle } from '../identity/sign-in-throttle'
import { listUserMemberships } from '../memberships/queries'
import { checkSecondFactor, type SecondFactorAnswer } from '../mfa/service'
import { markMfaChallengeConfirmed, releaseMfaChallengeAttempt, reserveMfaChallengeAttempt } from '../mfa/queries'
import { verifyPasswordlessAssertion } from '../mfa/webauthn'
import { liftSessionMfaGate } from '../sessions/queries'
import { findUserByEmail, findUserById } from '../users/queries'
import { landingMembership, moveSessionInto, refusal } from './policy'
import { startSession, type SessionContext } from './session-start'

type Deps = Pick<ServiceDeps, 'sql' | 'config'>

/** Wrong answers a sign-in challenge takes before it is burnt: with a 6-digit code and two live steps, a guesser
 *  has 10 in a million per password typed, and the password attempts are throttled on their own. */
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5

/** Same answer and the same argon2 cost whether the email is unknown or the password is wrong. Failures are
 *  throttled per account and per address (`throttle`). The session lands in the first active membership whose
 *  tenant admits passwords, with that tenant's lifetimes. */
export async function signInWithPassword(deps: Deps & { signInThrottle?: SignInThrottle }, input: { email: string; password: string }, ctx: SessionContext) {
  const throttle = deps.signInThrottle
  const ip = ctx.ip ?? 'unknown'
  await throttle?.admit(input.email, ip)
  const user = await findUserByEmail(deps.sql, input.email)
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
  const { membershipId, blocked } = await landingMembership(deps.sql, deps, user.id, 'password')
  if (blocked) throw new ApiError('UNAUTHORIZED', 'Your organisation does not allow password sign-in: use single sign-on or a passkey')
  const session = await startSession(deps.sql, deps, user.id, membershipId, ctx, { method: 'password', passwordChangeRequired: user.password_change_required })
  return { user, membershipId, session }
}

/** A discoverable passkey with user verification is both factors at once: the session starts ungated. */
export async function signInWithPasskey(deps: Deps, assertion: unknown, ctx: SessionContext) {
  const cred = await verifyPasswordlessAssertion(deps.sql, deps.config, assertion as AuthenticationResponseJSON)
  const user = cred ? await findUserById(deps.sql, cred.user_id) : undefined
  if (!user || user.status !== 'active') throw new ApiError('UNAUTHORIZED', 'This passkey was not accepted')
  const { membershipId, blocked } = await landingMembership(deps.sql, deps, user.id, 'passkey')
  if (blocked) throw new ApiError('UNAUTHORIZED', 'Your organisation does not allow passkey sign-in: use single sign-on')
  const session = await startSession(deps.sql, deps, user.id, membershipId, ctx, { method: 'passkey', secondFactorVerified: true })
  return { user, membershipId, session }
}

const challengeFailed = () => new ApiError('UNAUTHORIZED', 'The second factor was not accepted')

/** Lifts the gate of the session the challenge belongs to. Each answer takes one of the challenge's attempts before
 *  it is checked, so parallel answers cannot check more than the limit; an unknown, expired, answered or burnt
 *  challenge answers the same 401 as a wrong code. */
export async function confirmChallenge(deps: Pick<ServiceDeps, 'sql' | 'config' | 'keys'>, input: SecondFactorAnswer & { challengeId: string }) {
  const ch = await reserveMfaChallengeAttempt(deps.sql, input.challengeId, MFA_CHALLENGE_MAX_ATTEMPTS)
  if (!ch) throw new ApiError('UNAUTHORIZED', 'This challenge is unknown, expired, already answered or burnt by wrong answers; sign in again')
  let ok: boolean
  try {
    ok = await checkSecondFactor(deps, ch.user_id, input, ch.webauthn_challenge)
  } catch (err) {
    // The account's failure budget refused it unchecked: that costs the challenge no attempt.
    if (err instanceof ApiError && err.code === 'RATE_LIMITED') await releaseMfaChallengeAttempt(deps.sql, ch.id)
    throw err
  }
  if (!ok) throw challengeFailed()
  // The challenge is spent and the gate lifted together, once.
  const membershipId = await deps.sql.begin(async (tx) => {
    const sessionId = await markMfaChallengeConfirmed(tx, ch.id)
    const lifted = sessionId ? await liftSessionMfaGate(tx, sessionId) : undefined
    if (!lifted) throw challengeFailed()
    return lifted.membership_id
  })
  return { userId: ch.user_id, membershipId }
}

/** Moves the current session to another of the caller's memberships when that tenant's policy admits the way the
 *  session authenticated (api/sign-in/policy.ts), under that tenant's lifetimes. */
export async function switchCurrentMembership(deps: Deps, principal: Principal, membershipId: string): Promise<string> {
  if (principal.credential !== 'session') throw new ApiError('BAD_REQUEST', 'A personal access token is bound to its membership; only a session can switch')
  const m = isUuid(membershipId) ? (await listUserMemberships(deps.sql, principal.userId)).find((x) => x.id === membershipId) : undefined
  if (!m) throw new ApiError('MEMBERSHIP_NOT_FOUND', 'You have no membership with this id')
  if (m.status === 'disabled') throw new ApiError('MEMBERSHIP_DISABLED', 'That membership is disabled')
  if (m.status === 'expired') throw new ApiError('MEMBERSHIP_EXPIRED', 'That membership has expired')
  const verdict = await moveSessionInto(deps.sql, deps, principal, { id: m.id, tenantId: m.tenant_id })
  if (verdict !== 'admitted') throw refusal(verdict)
  return m.id
}
