import { hmac, safeEqual, sha256 } from '../platform/crypto'
import type { ServiceDeps } from '../platform/deps'
import { ApiError, type ErrorCode } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { detachedContext, logIds, tenantOf, type RequestContext } from '../identity/context'
import type { Principal } from '../identity/service'
import { recordAudit } from '../audit/service'
import { enqueueMail } from '../mail/service'
import { findMembershipOf } from '../memberships/queries'
import { revokeOtherSessions } from '../sessions/queries'
import { findUserByEmail, findUserById, type UserRow } from '../users/queries'
import { applyNewPassword, prepareNewPassword } from '../users/service'
import { codeDigest, issueGrant, RESET_MINUTES } from './grants'
import { claimResetSlot, consumeReset, findLatestCodeReset, findResetByTokenHash, releaseResetAttempt, reserveResetAttempt, type ResetRow } from './queries'

/** One request a minute per address; wrong codes a grant survives before it is burnt. */
export const RESET_INTERVAL_SECONDS = 60
export const MAX_CODE_ATTEMPTS = 5

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'keys' | 'mail'>

/** Throttled per address whether or not an account has it, so the throttle reveals nothing either. */
async function claimSlot({ sql, keys }: Deps, email: string): Promise<void> {
  const key = hmac(keys.secrets, `password-reset-throttle:${email.toLowerCase()}`)
  if (!(await claimResetSlot(sql, key, RESET_INTERVAL_SECONDS))) {
    throw new ApiError('PASSWORD_RESET_REQUEST_TOO_FREQUENT', `Only one reset request a minute per address; try again in a minute`)
  }
}

/** Issues the grant, records the request and queues the mail in one transaction. `byAdmin`: the tenant and the
 *  member's membership when an administrator asked for it (they are the actor then); null for the user's own request. */
async function mailReset(
  deps: Deps,
  ctx: RequestContext<Principal | null>,
  user: UserRow,
  byAdmin: { tenantId: string; membershipId: string } | null,
): Promise<void> {
  const tenantId = byAdmin?.tenantId ?? null
  const mail = await deps.sql.begin(async (tx) => {
    const grant = await issueGrant(tx, deps, { userId: user.id, kind: 'reset', ttlSeconds: RESET_MINUTES * 60 })
    await recordAudit(tx, ctx, {
      action: 'user.password_reset_requested',
      subjectUserId: user.id,
      target: { type: 'user', id: user.id },
      details: tenantId ? { via: 'administrator', tenantId } : { via: 'self_service' },
    })
    // The account's entry is in no tenant's log; the tenant's other managers see one of them reset a member's
    // password through this one.
    if (byAdmin) {
      await recordAudit(tx, ctx, {
        action: 'membership.password_reset_requested',
        tenantId: byAdmin.tenantId,
        subjectUserId: user.id,
        target: { type: 'membership', id: byAdmin.membershipId },
      })
    }
    return enqueueMail(
      tx,
      { to: user.email, tenantId, template: 'passwordReset', data: { link: grant.link, code: grant.code!, minutes: RESET_MINUTES } },
      deps.keys,
    )
  })
  await deps.mail.dispatch([mail], logIds(ctx))
}

/** POST /password-resets. The caller learns nothing: after the throttle (the same for every address) it answers
 *  at once, and the lookup, entry and mail happen in `background`, so a known address costs the caller no extra
 *  time. An unknown address records nothing (an entry would be a trace of the address). */
export async function requestPasswordReset(deps: Deps, ctx: RequestContext<null>, email: string): Promise<{ background: Promise<void> }> {
  await claimSlot(deps, email)
  const later = detachedContext(ctx)
  const background = (async () => {
    const user = await findUserByEmail(deps.sql, email)
    if (user && user.status !== 'disabled') await mailReset(deps, later, user, null)
  })()
  return { background }
}

/** POST /users/{userId}/password-reset-requests: only for members of the caller's tenant; anyone else is 404. */
export async function adminRequestPasswordReset(deps: Deps, ctx: RequestContext, userId: string) {
  const { tenantId } = tenantOf(ctx)
  const notFound = () => new ApiError('RESOURCE_NOT_FOUND', 'No member of this tenant has that id')
  const membership = isUuid(userId) ? await findMembershipOf(deps.sql, tenantId, userId) : undefined
  if (!membership) throw notFound()
  const user = await findUserById(deps.sql, userId)
  if (!user || user.status === 'disabled') throw notFound()
  await claimSlot(deps, user.email)
  await mailReset(deps, ctx, user, { tenantId, membershipId: membership.id })
  return { userId, requested: true as const }
}

const isExpired = (g: ResetRow) => g.expires_at.getTime() <= Date.now()

async function grantFromToken({ sql }: Deps, token: string): Promise<ResetRow> {
  const grant = await findResetByTokenHash(sql, sha256(token))
  if (!grant || grant.used_at) throw new ApiError('PASSWORD_RESET_TOKEN_INVALID', 'This reset link is not valid (or was already used)')
  if (isExpired(grant)) throw new ApiError('PASSWORD_RESET_TOKEN_EXPIRED', 'This reset link has expired; request a new one')
  return grant
}

async function grantFromCode({ sql, keys }: Deps, email: string, code: string): Promise<ResetRow> {
  const invalid = () => new ApiError('PASSWORD_RESET_CODE_INVALID', 'This reset code is not valid; request a new one after several failures')
  const user = await findUserByEmail(sql, email)
  const grant = user ? await findLatestCodeReset(sql, user.id) : undefined
  if (!grant?.code_hash || !(await reserveResetAttempt(sql, grant.id, MAX_CODE_ATTEMPTS))) throw invalid()
  // Any key of the ring: a code mailed before a rotation still works for its few minutes.
  const stored = Buffer.from(grant.code_hash)
  if (!keys.ring.some((k) => safeEqual(codeDigest(k.secrets, grant.id, code), stored))) throw invalid()
  await releaseResetAttempt(sql, grant.id)
  if (isExpired(grant)) throw new ApiError('PASSWORD_RESET_CODE_EXPIRED', 'This reset code has expired; request a new one')
  return grant
}

/** POST /password-resets/confirmations: by link token or by email and code. Sets the password (it also completes
 *  an activation), ends every session of the user and records it, in one transaction. Whoever holds the grant
 *  proved they read the account's mail: the entry names the user as its actor. */
export async function confirmPasswordReset(
  deps: Deps,
  ctx: RequestContext<null>,
  input: { token?: string; email?: string; code?: string; newPassword: string },
) {
  const { sql } = deps
  const grant = input.token ? await grantFromToken(deps, input.token) : await grantFromCode(deps, input.email!, input.code!)
  const invalidCode: ErrorCode = input.token ? 'PASSWORD_RESET_TOKEN_INVALID' : 'PASSWORD_RESET_CODE_INVALID'
  const user = await findUserById(sql, grant.user_id)
  if (!user || user.status === 'disabled') throw new ApiError(invalidCode, 'This reset grant is not valid')
  const hash = await prepareNewPassword(sql, user, input.newPassword)
  return sql.begin(async (tx) => {
    if (!(await consumeReset(tx, grant.id, user.id))) throw new ApiError(invalidCode, 'This reset grant was already used')
    await applyNewPassword(tx, user.id, hash)
    const sessionsEnded = await revokeOtherSessions(tx, user.id, null)
    await recordAudit(tx, ctx, {
      action: 'user.password_reset_completed',
      actorUserId: user.id,
      target: { type: 'user', id: user.id },
      details: { grant: grant.kind, with: input.token ? 'link' : 'code', sessionsEnded },
    })
    return { passwordReset: true as const, sessionsEnded }
  })
}
