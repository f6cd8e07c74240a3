import type { Db } from '../platform/db'

export interface UserRow {
  id: string
  email: string
  display_name: string | null
  password_hash: string | null
  status: 'active' | 'activation_required' | 'disabled'
  password_change_required: boolean
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

/** An administrator's provisioning: no password yet (invite), or an initial one to be changed (create). */
export async function insertProvisionedUser(db: Db, u: {
  email: string; displayName: string | null; passwordHash: string | null; status: 'active' | 'activation_required'
}): Promise<UserRow | null> {
  const [row] = await db<UserRow[]>`
    insert into users (email, display_name, password_hash, status, password_change_required)
    values (${u.email}, ${u.displayName}, ${u.passwordHash}, ${u.status}, ${u.passwordHash !== null})
    on conflict (lower(email)) do nothing
    returning *`
  return row ?? null
}

/** Sets a password the user chose: clears the initial-password mark and completes a pending activation. */
export async function setUserPassword(db: Db, userId: string, passwordHash: string): Promise<void> {
  await db`
    update users set password_hash = ${passwordHash}, password_change_required = false,
           status = case when status = 'activation_required' then 'active' else status end,
           version = version + 1, updated_at = now()
     where id = ${userId}`
  await db`update sessions set password_change_required = false where user_id = ${userId}`
}

export async function recentPasswordHashes(db: Db, userId: string, count: number): Promise<string[]> {
  const rows = await db<{ password_hash: string }[]>`
    select password_hash from password_history where user_id = ${userId} order by id desc limit ${count}`
  return rows.map((r) => r.password_hash)
}

/** Records a hash and keeps only the newest `keep` of the user's history. */
export async function recordPasswordHistory(db: Db, userId: string, passwordHash: string, keep: number): Promise<void> {
  await db`insert into password_history (user_id, password_hash) values (${userId}, ${passwordHash})`
  await db`
    delete from password_history where user_id = ${userId}
       and id not in (select id from password_history where user_id = ${userId} order by id desc limit ${keep})`
}

/** The membership of a user in one tenant (any status but removed), or undefined. */
export async function findMembershipOf(db: Db, tenantId: string, userId: string): Promise<{ id: string; status: string } | undefined> {
  const [row] = await db<{ id: string; status: string }[]>`
    select id, status from memberships where tenant_id = ${tenantId} and user_id = ${userId} and status <> 'removed'`
  return row
}

export async function findTenantName(db: Db, tenantId: string): Promise<string> {
  const [row] = await db<{ name: string }[]>`select name from tenants where id = ${tenantId}`
  return row?.name ?? 'your organisation'
}
