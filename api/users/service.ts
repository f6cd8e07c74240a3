import type { Config } from '../platform/config'
import type { Db, Sql } from '../platform/db'
import { ApiError } from '../platform/errors'
import { checkPasswordPolicy, hashPassword } from '../identity/passwords'
import { startSession, type SessionContext } from '../sessions/service'
import type { AuthMe, UserDto } from './model'
import { findUserById, insertUser, listUserMemberships, updateUserProfile, type MembershipViewRow, type UserRow } from './queries'

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
  checkPasswordPolicy(input.password)
  const passwordHash = await hashPassword(input.password)
  return sql.begin(async (tx) => {
    const user = await insertUser(tx, { email: input.email, passwordHash })
    if (!user) throw new ApiError('EMAIL_ALREADY_REGISTERED', 'An account with this email already exists')
    const session = await startSession(tx, config, user.id, null, ctx)
    return { user, session }
  })
}

export async function updateMe(db: Db, userId: string, expectedVersion: number | null, displayName: string | null | undefined) {
  const row = await updateUserProfile(db, userId, expectedVersion, displayName)
  if (!row) throw new ApiError('PRECONDITION_FAILED', 'If-Match does not match the current version; fetch the resource and retry')
  return row
}
