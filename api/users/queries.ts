import type { Db } from '../platform/db'

export interface UserRow {
  id: string
  email: string
  display_name: string | null
  password_hash: string | null
  status: 'active' | 'activation_required' | 'disabled'
  version: number
  created_at: Date
  updated_at: Date
}

export interface MembershipViewRow {
  id: string
  tenant_id: string
  tenant_name: string
  tenant_slug: string
  role: string
  status: string
}

/** null when the email is taken (case-insensitively): the unique index decides, not a racy pre-check. */
export async function insertUser(db: Db, u: { email: string; passwordHash: string }): Promise<UserRow | null> {
  const [row] = await db<UserRow[]>`
    insert into users (email, password_hash) values (${u.email}, ${u.passwordHash})
    on conflict (lower(email)) do nothing
    returning *`
  return row ?? null
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`select * from users where id = ${id}`
  return row
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`select * from users where lower(email) = lower(${email})`
  return row
}

/** The version comparison sits in the UPDATE itself, so a stale If-Match can never write. */
export async function updateUserProfile(db: Db, id: string, expectedVersion: number | null, displayName: string | null | undefined): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`
    update users
       set display_name = case when ${displayName === undefined} then display_name else ${displayName ?? null} end,
           version = version + 1, updated_at = now()
     where id = ${id} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning *`
  return row
}

export async function listUserMemberships(db: Db, userId: string): Promise<MembershipViewRow[]> {
  return db<MembershipViewRow[]>`
    select m.id, m.tenant_id, t.name as tenant_name, t.slug as tenant_slug, m.role,
           case when m.status = 'active' and m.expires_at <= now() then 'expired' else m.status end as status
      from memberships m join tenants t on t.id = m.tenant_id
     where m.user_id = ${userId} and m.status <> 'removed'
     order by m.created_at, m.id`
}
