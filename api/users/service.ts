import type { Config } from '../platform/config'
import { randomToken } from '../platform/crypto'
import type { Db, Sql } from '../platform/db'
import { ApiError } from '../platform/errors'
import { checkPasswordPolicy, hashPassword, verifyPassword } from '../identity/passwords'
import { requireActiveMembership, type Principal } from '../identity/service'
import type { Role } from '../identity/permissions'
import { emailDomainAllowed, getAuthPolicy, passwordMinLengthFor } from '../auth-policy/service'
import { enqueueMail, type MailDispatcher, type QueuedMail } from '../mail/service'
import { issueGrant } from '../password-resets/grants'
import { revokeOtherSessions } from '../sessions/queries'
import { startSession, type SessionContext } from '../sessions/service'
import { insertMembership } from '../tenants/queries'
import type { AuthMe, UserDto } from './model'
import {
  findMembershipOf, findTenantName, findUserByEmail, findUserById, insertProvisionedUser, insertUser, listUserMemberships,
  recentPasswordHashes, recordPasswordHistory, setUserPassword, updateUserProfile, type MembershipViewRow, type UserRow,
} from './queries'

/** What account flows need besides the database: configuration, the secrets key and the mail dispatcher. */
export interface AccountsEnv {
  config: Config
  secretsKey: Buffer
  mail: MailDispatcher
}

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
  id: m.id, tenantId: m.tenant_id, tenantName: m.tenant_name, tenantSlug: m.tenant_slug,
  role: m.role as AuthMe['memberships'][number]['role'], status: m.status as AuthMe['memberships'][number]['status'],
})

export async function describeMe(db: Db, userId: string, currentMembershipId: string | null): Promise<{ me: AuthMe; version: number }> {
  const [user, memberships] = await Promise.all([findUserById(db, userId), listUserMemberships(db, userId)])
  if (!user) throw new ApiError('UNAUTHORIZED', 'The account behind this credential no longer exists')
  const list = memberships.map(toMembership)
  return {
    me: { user: toUserDto(user), currentMembership: list.find((m) => m.id === currentMembershipId) ?? null, memberships: list },
    version: user.version,
  }
}

/** Self-registration: the account and its first session are created together or not at all. */
export async function registerUser(sql: Sql, config: Config, input: { email: string; password: string }, ctx: SessionContext) {
  checkPasswordPolicy(input.password, undefined, [input.email])
  const passwordHash = await hashPassword(input.password)
  return sql.begin(async (tx) => {
    const user = await insertUser(tx, { email: input.email, passwordHash })
    if (!user) throw new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists')
    await recordPasswordHistory(tx, user.id, passwordHash, PASSWORD_HISTORY)
    const session = await startSession(tx, config, user.id, null, ctx)
    return { user, session }
  })
}

export async function updateMe(db: Db, userId: string, expectedVersion: number | null, displayName: string | null | undefined) {
  const row = await updateUserProfile(db, userId, expectedVersion, displayName)
  if (!row) throw new ApiError('PRECONDITION_FAILED', 'If-Match does not match the current version; fetch the resource and retry')
  return row
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
  await recordPasswordHistory(tx, userId, passwordHash, PASSWORD_HISTORY)
}

/** PATCH /users/me/password: the current password proves it is the user; optionally ends the other sessions. */
export async function changePassword(sql: Sql, principal: Principal, input: { currentPassword?: string; newPassword: string; endOtherSessions?: boolean }) {
  const user = await findUserById(sql, principal.userId)
  if (!user) throw new ApiError('UNAUTHORIZED', 'The account behind this credential no longer exists')
  if (user.password_hash) {
    if (!input.currentPassword) throw new ApiError('CURRENT_PASSWORD_REQUIRED', 'currentPassword is required to change the password')
    if (!(await verifyPassword(input.currentPassword, user.password_hash))) {
      throw new ApiError('CURRENT_PASSWORD_INVALID', 'currentPassword is not the current password')
    }
  }
  const hash = await prepareNewPassword(sql, user, input.newPassword)
  return sql.begin(async (tx) => {
    await applyNewPassword(tx, user.id, hash)
    const keep = principal.credential === 'session' ? principal.credentialId : null
    const otherSessionsEnded = input.endOtherSessions ? await revokeOtherSessions(tx, user.id, keep) : 0
    return { passwordChanged: true as const, otherSessionsEnded }
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
export async function provisionUser(sql: Sql, env: AccountsEnv, principal: Principal, input: ProvisionInput) {
  const membership = requireActiveMembership(principal, undefined)
  const tenantId = membership.tenantId
  const { policy } = await getAuthPolicy(sql, tenantId, env.config)
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
      email: input.email, displayName: input.displayName ?? null, passwordHash, status: initialPassword ? 'active' : 'activation_required',
    })
    if (!user) throw new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists')
    const member = await insertMembership(tx, { tenantId, userId: user.id, role: input.role })
    let mail: QueuedMail
    if (initialPassword && passwordHash) {
      await recordPasswordHistory(tx, user.id, passwordHash, PASSWORD_HISTORY)
      mail = await enqueueMail(tx, { to: user.email, tenantId, template: 'initialPassword', data: { password: initialPassword, tenantName } }, env.secretsKey)
    } else {
      const grant = await issueGrant(tx, env, { userId: user.id, kind: 'activation', ttlSeconds: ACTIVATION_DAYS * 86_400 })
      mail = await enqueueMail(tx, {
        to: user.email, tenantId, template: 'accountActivation', data: { link: grant.link, tenantName, days: ACTIVATION_DAYS },
      }, env.secretsKey)
    }
    return { user, membership: member, mail }
  })
  await env.mail.dispatch([result.mail])
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
