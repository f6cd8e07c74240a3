import { staleVersion } from '../platform/etag'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import type { RequestContext } from '../identity/context'
import { checkPasswordPolicy, hashPassword, verifyPassword } from '../identity/passwords'
import type { Principal } from '../identity/service'
import type { SignInThrottle } from '../identity/sign-in-throttle'
import { changesBetween, recordAudit } from '../audit/service'
import { passwordMinLengthFor } from '../auth-policy/service'
import { listUserMemberships, type MembershipViewRow } from '../memberships/queries'
import { clearSessionsPasswordChange, revokeOtherSessions } from '../sessions/queries'
import type { AuthMe, UserDto } from './model'
import { findUserById, lockUser, recentPasswordHashes, recordPasswordHistory, setUserPassword, updateUserProfile, type UserRow } from './queries'

type Deps = Pick<ServiceDeps, 'sql'>

/** A new password may not be any of the last five (the current one included). */
export const PASSWORD_HISTORY = 5

export const toUserDto = (u: UserRow): UserDto => ({
  id: u.id,
  email: u.email,
  displayName: u.display_name,
  status: u.status,
  createdAt: u.created_at.toISOString(),
  updatedAt: u.updated_at.toISOString(),
})

const toMembership = (m: MembershipViewRow) => ({
  id: m.id,
  tenantId: m.tenant_id,
  tenantName: m.tenant_name,
  tenantSlug: m.tenant_slug,
  role: m.role,
  status: m.status as AuthMe['memberships'][number]['status'],
})

/** The account, its memberships and the one the credential sits in. */
export function meOf(user: UserRow, memberships: MembershipViewRow[], currentMembershipId: string | null): AuthMe {
  const list = memberships.map(toMembership)
  return { user: toUserDto(user), currentMembership: list.find((m) => m.id === currentMembershipId) ?? null, memberships: list }
}

export async function describeMe({ sql }: Deps, userId: string, currentMembershipId: string | null): Promise<{ me: AuthMe; version: number }> {
  const [user, memberships] = await Promise.all([findUserById(sql, userId), listUserMemberships(sql, userId)])
  if (!user) throw new ApiError('UNAUTHORIZED', 'The account behind this credential no longer exists')
  return { me: meOf(user, memberships, currentMembershipId), version: user.version }
}

/** GET /users/me: the caller, in the membership the credential sits in, and whether that tenant is billing-blocked
 *  (the standing the gate reads, so a console can say what is refused before anyone tries it). */
export async function describeCurrentUser(deps: Deps, ctx: RequestContext) {
  const { me, version } = await describeMe(deps, ctx.principal.userId, ctx.principal.membership?.id ?? null)
  return { me: { ...me, billingBlock: [...(ctx.principal.membership?.standing.billingBlock ?? [])] }, version }
}

/** The profile as an entry's changes name it (API names; none of it secret). */
const profileOf = (u: UserRow) => ({ displayName: u.display_name })

export async function updateMe({ sql }: Deps, ctx: RequestContext, expectedVersion: number | null, displayName: string | null | undefined) {
  return sql.begin(async (tx) => {
    // Read under the row lock, so `before` is the value this update replaces, not one a concurrent edit already moved.
    const before = await lockUser(tx, ctx.principal.userId)
    const row = before && (await updateUserProfile(tx, before.id, expectedVersion, displayName))
    if (!row) throw staleVersion()
    const changes = changesBetween(profileOf(before), profileOf(row), ['displayName'])
    if (changes) await recordAudit(tx, ctx, { action: 'user.profile_updated', target: { type: 'user', id: row.id }, changes })
    return row
  })
}

/** Policy (the strictest of the user's tenants) and reuse checks, then the hash: everything slow happens before
 *  the caller's transaction opens. */
export async function prepareNewPassword(db: Db, user: Pick<UserRow, 'id' | 'email' | 'password_hash'>, password: string): Promise<string> {
  checkPasswordPolicy(password, await passwordMinLengthFor(db, user.id), [user.email])
  const previous = [...new Set([...(user.password_hash ? [user.password_hash] : []), ...(await recentPasswordHashes(db, user.id, PASSWORD_HISTORY))])]
  const reused = await Promise.all(previous.slice(0, PASSWORD_HISTORY).map((h) => verifyPassword(password, h)))
  if (reused.some(Boolean)) {
    throw new ApiError('PASSWORD_REUSE_NOT_ALLOWED', `The new password must differ from your last ${PASSWORD_HISTORY} passwords`)
  }
  return hashPassword(password)
}

/** Stores a prepared hash: the password, its history entry, the end of any initial-password restriction. */
export async function applyNewPassword(tx: Db, userId: string, passwordHash: string): Promise<void> {
  await setUserPassword(tx, userId, passwordHash)
  await clearSessionsPasswordChange(tx, userId)
  await recordPasswordHistory(tx, userId, passwordHash, PASSWORD_HISTORY)
}

/** How recently a session must have authenticated to give an account its first password. */
export const FIRST_PASSWORD_RECENT_MS = 5 * 60_000

/** Without a password there is nothing to prove the caller is the user but the sign-in itself: only a session
 *  that authenticated moments ago may set the first one (a PAT or an old session may be stolen; the password
 *  would then outlive the theft). */
function requireFreshSession(p: Principal): void {
  if (p.credential !== 'session') {
    throw new ApiError('FORBIDDEN', 'This account has no password yet: set the first one from a signed-in session, not with a personal access token')
  }
  if (!p.authentication || Date.now() - p.authentication.authenticatedAt.getTime() > FIRST_PASSWORD_RECENT_MS) {
    throw new ApiError('FORBIDDEN', 'This account has no password yet: sign in again, then set it within 5 minutes')
  }
}

/** Guesses of currentPassword are sign-in failures of the account (docs/api.md "Sign-in throttling"): a stolen
 *  session cannot brute-force the password behind it. A wrong guess is recorded (with the pool: the 400 that
 *  follows must not take it back). */
async function checkCurrentPassword(
  { sql, signInThrottle: throttle }: Deps & { signInThrottle: SignInThrottle },
  ctx: RequestContext,
  user: UserRow,
  given: string | undefined,
): Promise<void> {
  if (!given) throw new ApiError('CURRENT_PASSWORD_REQUIRED', 'currentPassword is required to change the password')
  const ip = ctx.ip ?? 'unknown'
  await throttle.admit(user.email, ip)
  if (!(await verifyPassword(given, user.password_hash))) {
    throttle.failed(user.email, ip)
    await recordAudit(sql, ctx, { action: 'user.password_changed', target: { type: 'user', id: user.id }, outcome: 'failure', reason: 'invalid_credentials' })
    throw new ApiError('CURRENT_PASSWORD_INVALID', 'currentPassword is not the current password')
  }
  throttle.succeeded(user.email)
}

/** PATCH /users/me/password: the current password proves it is the user; optionally ends the other sessions. */
export async function changePassword(
  deps: Deps & { signInThrottle: SignInThrottle },
  ctx: RequestContext,
  input: { currentPassword?: string; newPassword: string; endOtherSessions?: boolean },
) {
  const { sql } = deps
  const { principal } = ctx
  const user = await findUserById(sql, principal.userId)
  if (!user) throw new ApiError('UNAUTHORIZED', 'The account behind this credential no longer exists')
  if (user.password_hash) await checkCurrentPassword(deps, ctx, user, input.currentPassword)
  else requireFreshSession(principal)
  const hash = await prepareNewPassword(sql, user, input.newPassword)
  return sql.begin(async (tx) => {
    await applyNewPassword(tx, user.id, hash)
    const keep = principal.credential === 'session' ? principal.credentialId : null
    const otherSessionsEnded = input.endOtherSessions ? await revokeOtherSessions(tx, user.id, keep) : 0
    await recordAudit(tx, ctx, {
      action: 'user.password_changed',
      target: { type: 'user', id: user.id },
      details: { firstPassword: !user.password_hash, otherSessionsEnded },
    })
    return { passwordChanged: true as const, otherSessionsEnded }
  })
}
