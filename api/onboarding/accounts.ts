import { randomToken } from '../platform/crypto'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { checkPasswordPolicy, hashPassword } from '../identity/passwords'
import type { Role } from '../identity/permissions'
import { logIds, tenantOf, type RequestContext } from '../identity/context'
import { requireRoleWithinReach, type Principal } from '../identity/service'
import { recordAudit } from '../audit/service'
import { emailDomainAllowed, getAuthPolicy } from '../auth-policy/service'
import { enqueueMail, type QueuedMail } from '../mail/service'
import { findMembershipOf, insertMembership } from '../memberships/queries'
import { issueGrant } from '../password-resets/grants'
import { startSession } from '../sign-in/session-start'
import { findTenantName } from '../tenants/queries'
import { findUserByEmail, insertProvisionedUser, insertUser, recordPasswordHistory } from '../users/queries'
import { PASSWORD_HISTORY, toUserDto } from '../users/service'

/** Self-registration: the account, its first session and its user.registered entry are created together or not at
 *  all. Anonymous whatever the request presented: the new account is the actor. */
export async function registerUser(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'keys'>,
  ctx: RequestContext<Principal | null>,
  input: { email: string; password: string },
) {
  checkPasswordPolicy(input.password, undefined, [input.email])
  const passwordHash = await hashPassword(input.password)
  return deps.sql.begin(async (tx) => {
    const user = await insertUser(tx, { email: input.email, passwordHash })
    if (!user) throw new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists')
    await recordPasswordHistory(tx, user.id, passwordHash, PASSWORD_HISTORY)
    await recordAudit(tx, ctx, {
      action: 'user.registered',
      actorUserId: user.id,
      target: { type: 'user', id: user.id },
      details: { via: 'self_registration' },
    })
    const session = await startSession(tx, deps, user.id, null, ctx, { method: 'password' })
    return { user, session }
  })
}

export interface ProvisionInput {
  mode: 'invite' | 'create'
  role: Role
  email: string
  displayName?: string | null
}

const ACTIVATION_DAYS = 7

/** An administrator adds a person to their tenant. `invite`: no password; an activation link (7 days) lets them
 *  choose one. `create`: a random initial password is mailed (never returned), to be changed at first sign-in. */
export async function provisionUser(deps: Pick<ServiceDeps, 'sql' | 'config' | 'keys' | 'mail'>, ctx: RequestContext, input: ProvisionInput) {
  const { sql, keys } = deps
  const { principal } = ctx
  const { tenantId } = tenantOf(ctx)
  requireRoleWithinReach(principal, input.role)
  const { policy } = await getAuthPolicy(sql, tenantId, deps.config)
  if (!emailDomainAllowed(policy, input.email)) {
    throw new ApiError('VALIDATION_ERROR', "The email's domain is not allowed by this tenant's auth policy", {
      errors: [{ path: 'body.email', message: `domain must be one of: ${policy.allowedEmailDomains.join(', ')}` }],
    })
  }
  const existing = await findUserByEmail(sql, input.email)
  if (existing) throw await existingAccountError(sql, tenantId, existing.id)
  const initialPassword = input.mode === 'create' ? randomToken(15) : null
  const passwordHash = initialPassword ? await hashPassword(initialPassword) : null
  const tenantName = await findTenantName(sql, tenantId)

  const result = await sql.begin(async (tx) => {
    const user = await insertProvisionedUser(tx, {
      email: input.email,
      displayName: input.displayName ?? null,
      passwordHash,
      status: initialPassword ? 'active' : 'activation_required',
    })
    if (!user) throw new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists')
    const member = await insertMembership(tx, { tenantId, userId: user.id, role: input.role })
    // The initial password, mailed below, is never part of the entry: only how the person will get in.
    await recordAudit(tx, ctx, {
      action: 'user.provisioned',
      tenantId,
      subjectUserId: user.id,
      target: { type: 'user', id: user.id },
      details: { email: user.email, role: member.role, membershipId: member.id, mode: input.mode },
    })
    let mail: QueuedMail
    if (initialPassword && passwordHash) {
      await recordPasswordHistory(tx, user.id, passwordHash, PASSWORD_HISTORY)
      mail = await enqueueMail(tx, { to: user.email, tenantId, template: 'initialPassword', data: { password: initialPassword, tenantName } }, keys)
    } else {
      const grant = await issueGrant(tx, deps, { userId: user.id, kind: 'activation', ttlSeconds: ACTIVATION_DAYS * 86_400 })
      mail = await enqueueMail(
        tx,
        {
          to: user.email,
          tenantId,
          template: 'accountActivation',
          data: { link: grant.link, tenantName, days: ACTIVATION_DAYS },
        },
        keys,
      )
    }
    return { user, membership: member, mail }
  })
  await deps.mail.dispatch([result.mail], logIds(ctx))
  return {
    user: toUserDto(result.user),
    membership: { id: result.membership.id, tenantId, userId: result.user.id, role: result.membership.role, status: result.membership.status },
    delivery: initialPassword ? ('initial_password_mailed' as const) : ('activation_link_mailed' as const),
  }
}

async function existingAccountError(db: Db, tenantId: string, userId: string): Promise<ApiError> {
  if (await findMembershipOf(db, tenantId, userId)) return new ApiError('USER_ALREADY_MEMBER', 'This person is already a member of this tenant')
  return new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists; invite it to the tenant instead')
}
