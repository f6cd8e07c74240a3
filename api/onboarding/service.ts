import { publicBase } from '../platform/config'
import { randomToken, sha256 } from '../platform/crypto'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { isUuid } from '../platform/ids'
import { checkPasswordPolicy, hashPassword } from '../identity/passwords'
import { logIds, tenantOf, type RequestContext } from '../identity/context'
import { requireRoleWithinReach, type Principal } from '../identity/service'
import { requireGoodStanding } from '../identity/standing'
import { recordAudit } from '../audit/service'
import { getAuthPolicy } from '../auth-policy/service'
import { enqueueMail } from '../mail/service'
import { dispatchNoticeMail, notify } from '../notifications/service'
import { isLiveMemberByEmail, joinTenant } from '../memberships/queries'
import { moveSessionInto, tenantVerdict } from '../sign-in/policy'
import { startSession } from '../sign-in/session-start'
import { findTenantName } from '../tenants/queries'
import { findUserByEmail, findUserById, insertUser, updateUserProfile } from '../users/queries'
import { type INVITATION_STATUSES, REGISTRATION_INVITATION_DAYS, TENANT_INVITATION_DAYS } from './model'
import {
  findRegistrationInvitation,
  findTenantInvitation,
  insertRegistrationInvitation,
  insertTenantInvitation,
  listTenantInvitations,
  lockInvitationByHash,
  markInvitationAccepted,
  markRegistrationCompleted,
  revokeOpenInvitations,
  revokeTenantInvitationRow,
  type TenantInvitationRow,
} from './queries'
import type { Role } from '../identity/permissions'
import { blockReasonsOf } from '../billing/block'

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'keys' | 'mail'>

const isExpired = (at: Date) => at.getTime() <= Date.now()

export function invitationStatus(r: TenantInvitationRow): (typeof INVITATION_STATUSES)[number] {
  return r.accepted_at ? 'accepted' : r.revoked_at ? 'revoked' : isExpired(r.expires_at) ? 'expired' : 'pending'
}

export const toInvitationDto = (r: TenantInvitationRow) => ({
  id: r.id,
  tenantId: r.tenant_id,
  email: r.email,
  role: r.role,
  status: invitationStatus(r),
  invitedByUserId: r.invited_by,
  expiresAt: r.expires_at.toISOString(),
  acceptedAt: r.accepted_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
})

/** The invitation row, the superseding of an older open one, its entry and the outbox mail commit together; the
 *  mail is started after commit. The role is within the inviter's reach (the role ceiling). */
export async function inviteToTenant(deps: Deps, ctx: RequestContext, input: { email: string; role: Role }) {
  const { principal } = ctx
  const actor = tenantOf(ctx)
  requireRoleWithinReach(principal, input.role)
  const token = randomToken(32)
  const link = `${publicBase(deps.config)}/invitations/accept?token=${encodeURIComponent(token)}`
  const { row, mail, note } = await deps.sql.begin(async (tx) => {
    if (await isLiveMemberByEmail(tx, actor.tenantId, input.email))
      throw new ApiError('USER_ALREADY_MEMBER', 'This address is already an active member of the tenant')
    const superseded = await revokeOpenInvitations(tx, actor.tenantId, input.email)
    const row = await insertTenantInvitation(tx, {
      tenantId: actor.tenantId,
      email: input.email,
      role: input.role,
      tokenHash: sha256(token),
      invitedBy: principal.userId,
      days: TENANT_INVITATION_DAYS,
    })
    for (const id of superseded) {
      await recordAudit(tx, ctx, {
        action: 'invitation.revoked',
        tenantId: actor.tenantId,
        target: { type: 'invitation', id },
        details: { supersededBy: row.id },
      })
    }
    // The token (and so the link) stays out of the entry: it would let a reader of the trail join the tenant.
    await recordAudit(tx, ctx, {
      action: 'invitation.created',
      tenantId: actor.tenantId,
      target: { type: 'invitation', id: row.id },
      details: { email: row.email, role: row.role, expiresAt: row.expires_at.toISOString() },
    })
    const tenantName = await findTenantName(tx, actor.tenantId)
    const mail = await enqueueMail(
      tx,
      { to: input.email, tenantId: actor.tenantId, template: 'tenantInvitation', data: { link, tenantName, role: input.role, days: TENANT_INVITATION_DAYS } },
      deps.keys,
    )
    // An account with this address sees the invitation in its inbox too (the link stays in the mail alone).
    const invitee = await findUserByEmail(tx, input.email)
    const note = invitee
      ? await notify(tx, deps.keys, {
          userId: invitee.id,
          tenantId: actor.tenantId,
          kind: 'tenant.invitation_received',
          fields: { invitationId: row.id, tenantName, role: row.role, expiresAt: row.expires_at.toISOString() },
          dedupeKey: `invitation:${row.id}`,
        })
      : null
    return { row, mail, note }
  })
  await deps.mail.dispatch([mail], logIds(ctx))
  await dispatchNoticeMail(deps, ctx, [note])
  return toInvitationDto(row)
}

export async function listInvitations(
  { sql: db, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { status?: (typeof INVITATION_STATUSES)[number] },
) {
  const { tenantId } = tenantOf(ctx)
  const status = q.status ?? 'pending'
  const binding = { route: 'GET /tenant-invitations', scope: `tenant:${tenantId}`, filters: { status } }
  const p = await paginate(keys, binding, q, (after, limit) => listTenantInvitations(db, tenantId, status, after, limit), createdCursorOf)
  return mapPage(p, toInvitationDto)
}

/** Revoking twice answers the same (and records nothing new); an accepted invitation cannot be revoked (remove the
 *  membership instead). */
export async function revokeInvitation({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  const found = isUuid(id) ? await findTenantInvitation(sql, tenantId, id) : undefined
  if (!found) throw new ApiError('NOT_FOUND', 'No invitation with this id in the current tenant')
  if (found.accepted_at) throw new ApiError('INVITATION_ALREADY_ACCEPTED', 'This invitation was accepted; remove the membership instead')
  if (found.revoked_at) return toInvitationDto(found)
  return sql.begin(async (tx) => {
    const row = await revokeTenantInvitationRow(tx, tenantId, id)
    if (!row) throw new ApiError('INVITATION_ALREADY_ACCEPTED', 'This invitation was accepted; remove the membership instead')
    await recordAudit(tx, ctx, {
      action: 'invitation.revoked',
      tenantId,
      target: { type: 'invitation', id: row.id },
      details: { email: row.email, role: row.role },
    })
    return toInvitationDto(row)
  })
}

/** Password rules broken on an acceptance answer VALIDATION_ERROR: the operation's 400 set has no policy code. */
function acceptancePassword(password: string | undefined, minLength: number, email: string): string {
  if (password === undefined) {
    throw new ApiError('VALIDATION_ERROR', 'This address has no account yet: choose a password', {
      errors: [{ path: 'body.password', message: 'is required for a new account' }],
    })
  }
  try {
    checkPasswordPolicy(password, minLength, [email])
  } catch (err) {
    throw new ApiError('VALIDATION_ERROR', (err as Error).message, { errors: [{ path: 'body.password', message: (err as Error).message }] })
  }
  return password
}

/** Accepts a tenant invitation: joins the signed-in user (whose email must be the invited one), or creates the
 *  account and signs it in when the address is new. An address that has an account must sign in first. The
 *  invitation row is locked, so one token joins once. */
export async function acceptInvitation(deps: Deps, ctx: RequestContext<Principal | null>, input: { token: string; password?: string; displayName?: string }) {
  const { principal } = ctx
  const hash = sha256(input.token)
  return deps.sql.begin(async (tx) => {
    const inv = await lockInvitationByHash(tx, hash)
    if (!inv) throw new ApiError('INVITATION_INVALID', 'This invitation link is not valid')
    if (inv.accepted_at) throw new ApiError('INVITATION_ALREADY_ACCEPTED', 'This invitation was already accepted')
    if (inv.revoked_at) throw new ApiError('INVITATION_REVOKED', 'This invitation was withdrawn by an administrator')
    if (isExpired(inv.expires_at)) throw new ApiError('INVITATION_EXPIRED', 'This invitation has expired; ask for a new one')
    // A new member is new work of the invitation's tenant (api/http/new-work.ts), whatever tenant the caller is in.
    requireGoodStanding({ lifecycle: inv.tenant_lifecycle, billingBlock: blockReasonsOf(inv.subscription_status, inv.operator_blocked) })
    let userId: string
    if (principal) {
      const user = await findUserById(tx, principal.userId)
      if (!user || user.email.toLowerCase() !== inv.email.toLowerCase()) {
        throw new ApiError('INVITATION_EMAIL_MISMATCH', 'This invitation was sent to another address than the one you are signed in with')
      }
      userId = user.id
    } else {
      if (await findUserByEmail(tx, inv.email)) throw new ApiError('UNAUTHORIZED', 'This address has an account: sign in, then accept the invitation')
      const { policy } = await getAuthPolicy(tx, inv.tenant_id, deps.config)
      const passwordHash = await hashPassword(acceptancePassword(input.password, policy.passwordMinLength, inv.email))
      const user = await insertUser(tx, { email: inv.email, passwordHash })
      if (!user) throw new ApiError('UNAUTHORIZED', 'This address has an account: sign in, then accept the invitation')
      userId = user.id
      await recordAudit(tx, ctx, {
        action: 'user.registered',
        actorUserId: userId,
        target: { type: 'user', id: userId },
        details: { via: 'tenant_invitation' },
      })
    }
    if (input.displayName !== undefined && !principal) await updateUserProfile(tx, userId, null, input.displayName)
    const membershipId = await joinTenant(tx, inv.tenant_id, userId, inv.role)
    await markInvitationAccepted(tx, inv.id, userId)
    await recordAudit(tx, ctx, {
      action: 'invitation.accepted',
      tenantId: inv.tenant_id,
      subjectUserId: userId,
      actorUserId: userId,
      target: { type: 'invitation', id: inv.id },
      details: { role: inv.role, membershipId },
    })
    const current = await landAfterAcceptance(tx, deps, principal, userId, { id: membershipId, tenantId: inv.tenant_id })
    const session = principal ? null : await startSession(tx, deps, userId, current, ctx, { method: 'password' })
    return { userId, membershipId, currentMembershipId: current, session }
  })
}

/** The invitation is spent and the membership made either way; the session moves into it only when the tenant's
 *  policy admits how the session signed in (a new account: its password), else it stays where it was (a new
 *  account: without a tenant) and the person signs in the way that tenant asks. A PAT never moves. */
async function landAfterAcceptance(
  tx: Db,
  deps: Deps,
  principal: Principal | null,
  _userId: string,
  m: { id: string; tenantId: string },
): Promise<string | null> {
  if (!principal) {
    const facts = { method: 'password' as const, ssoTenantId: null, secondFactor: false, hasSecondFactor: false }
    return (await tenantVerdict(tx, deps, m.tenantId, facts)) === 'admitted' ? m.id : null
  }
  if (principal.credential !== 'session') return m.id
  return (await moveSessionInto(tx, deps, principal, m)) === 'admitted' ? m.id : (principal.membership?.id ?? null)
}

/** Public: mails a single-use link to finish registration. An address that has an account is refused (the same
 *  answer POST /users gives, so it tells nothing new). */
export async function inviteToRegister(deps: Deps, ctx: RequestContext<null>, email: string) {
  const token = randomToken(32)
  const link = `${publicBase(deps.config)}/console/registration?token=${encodeURIComponent(token)}`
  const { row, mail } = await deps.sql.begin(async (tx) => {
    if (await findUserByEmail(tx, email)) throw new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists')
    const row = await insertRegistrationInvitation(tx, { email, tokenHash: sha256(token), days: REGISTRATION_INVITATION_DAYS })
    const mail = await enqueueMail(tx, { to: email, template: 'registrationInvitation', data: { link, days: REGISTRATION_INVITATION_DAYS } }, deps.keys)
    return { row, mail }
  })
  await deps.mail.dispatch([mail], logIds(ctx))
  return { email: row.email, expiresAt: row.expires_at.toISOString() }
}

/** `{email}` for a usable token; null for anything else (unknown, used or expired), telling nothing more. */
export async function validateRegistration({ sql: db }: Pick<ServiceDeps, 'sql'>, _ctx: RequestContext<null>, token: string) {
  const row = await findRegistrationInvitation(db, sha256(token))
  return row && !row.completed_at && !isExpired(row.expires_at) ? { email: row.email } : null
}

export async function completeRegistration(deps: Deps, ctx: RequestContext<null>, input: { token: string; password: string; displayName?: string }) {
  return deps.sql.begin(async (tx) => {
    const row = await findRegistrationInvitation(tx, sha256(input.token), true)
    if (!row) throw new ApiError('INVITATION_INVALID', 'This registration link is not valid')
    if (row.completed_at) throw new ApiError('INVITATION_ALREADY_ACCEPTED', 'This registration link was already used')
    if (isExpired(row.expires_at)) throw new ApiError('REGISTRATION_INVITATION_EXPIRED', 'This registration link has expired; ask for a new one')
    checkPasswordPolicy(input.password, undefined, [row.email])
    const passwordHash = await hashPassword(input.password)
    const user = await insertUser(tx, { email: row.email, passwordHash })
    if (!user) throw new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists')
    if (input.displayName !== undefined) await updateUserProfile(tx, user.id, null, input.displayName)
    await markRegistrationCompleted(tx, row.id)
    await recordAudit(tx, ctx, {
      action: 'user.registered',
      actorUserId: user.id,
      target: { type: 'user', id: user.id },
      details: { via: 'registration_invitation' },
    })
    const session = await startSession(tx, deps, user.id, null, ctx, { method: 'password' })
    return { userId: user.id, session }
  })
}
