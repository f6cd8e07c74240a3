import type { Db } from '../platform/db'

export interface UserRow {
  id: string
  email: string
  display_name: string | null
  password_hash: string | null
  status: 'active' | 'activation_required' | 'disabled' | 'erased'
  password_change_required: boolean
  /** Set exactly when status is erased (account erasure). */
  erased_at?: Date | null
  /** The SSO connection that created this account just in time; only it may claim the account by email. */
  created_by_sso_connection_id: string | null
  version: number
  created_at: Date
  updated_at: Date
}

/** An address is free unless an account holds it or an erased account held it within the window (account erasure):
 *  every way an account is made asks this in its insert. */
const addressFree = (db: Db, email: string) =>
  db`not exists (select 1 from erased_addresses e where e.address_hash = sha256(convert_to(lower(${email}), 'UTF8')) and e.reusable_at > now())`

/** null when the email is taken (case-insensitively): the unique index decides, not a racy pre-check. */
export async function insertUser(db: Db, u: { email: string; passwordHash: string }): Promise<UserRow | null> {
  const [row] = await db<UserRow[]>`
    insert into users (email, password_hash) select ${u.email}, ${u.passwordHash} where ${addressFree(db, u.email)}
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

/** The row, locked until the transaction ends: what an update in it replaces. */
export async function lockUser(db: Db, id: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`select * from users where id = ${id} for update`
  return row
}

/** The version comparison sits in the UPDATE itself, so a stale If-Match can never write. */
export async function updateUserProfile(
  db: Db,
  id: string,
  expectedVersion: number | null,
  displayName: string | null | undefined,
): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`
    update users
       set display_name = case when ${displayName === undefined} then display_name else ${displayName ?? null} end,
           version = version + 1, updated_at = now()
     where id = ${id} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning *`
  return row
}

/** An administrator's provisioning: no password yet (invite), or an initial one to be changed (create). */
export async function insertProvisionedUser(
  db: Db,
  u: {
    email: string
    displayName: string | null
    passwordHash: string | null
    status: 'active' | 'activation_required'
  },
): Promise<UserRow | null> {
  const [row] = await db<UserRow[]>`
    insert into users (email, display_name, password_hash, status, password_change_required)
    select ${u.email}, ${u.displayName}, ${u.passwordHash}, ${u.status}, ${u.passwordHash !== null} where ${addressFree(db, u.email)}
    on conflict (lower(email)) do nothing
    returning *`
  return row ?? null
}

/** An account a single sign-on provider vouches for: no password. undefined when the email is taken. */
export async function insertPasswordlessUser(db: Db, email: string, displayName: string | null, ssoConnectionId: string): Promise<string | undefined> {
  const [row] = await db<{ id: string }[]>`
    insert into users (email, display_name, password_hash, created_by_sso_connection_id)
    select ${email}, ${displayName}, null, ${ssoConnectionId}::uuid where ${addressFree(db, email)}
    on conflict (lower(email)) do nothing returning id`
  return row?.id
}

/** Sets a password the user chose: clears the initial-password mark and completes a pending activation. */
export async function setUserPassword(db: Db, userId: string, passwordHash: string): Promise<void> {
  await db`
    update users set password_hash = ${passwordHash}, password_change_required = false,
           status = case when status = 'activation_required' then 'active' else status end,
           version = version + 1, updated_at = now()
     where id = ${userId}`
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

/** The account's owner unlinked the connection that created it: that connection loses its claim by email too. */
export async function forgetCreatingConnection(db: Db, userId: string, connectionId: string): Promise<void> {
  await db`update users set created_by_sso_connection_id = null where id = ${userId} and created_by_sso_connection_id = ${connectionId}`
}

// ── Account erasure (api/account-erasure) ──────────────────────────────────────────────────────────────────────

/** Replaces the personal data with the pseudonym and ends the password; the row (and its id) stays. */
export async function pseudonymiseUser(db: Db, id: string, pseudonym: string): Promise<UserRow> {
  const [row] = await db<UserRow[]>`
    update users
       set email = ${pseudonym}, display_name = null, password_hash = null, status = 'erased', erased_at = now(),
           password_change_required = false, created_by_sso_connection_id = null, version = version + 1, updated_at = now()
     where id = ${id}
    returning *`
  return row!
}

export async function deletePasswordHistory(db: Db, userId: string): Promise<void> {
  await db`delete from password_history where user_id = ${userId}`
}

/** Keeps an erased address from a new account until `days` have passed (as its hash only); forgets the addresses
 *  whose window has passed. */
export async function holdErasedAddress(db: Db, email: string, days: number): Promise<void> {
  await db`delete from erased_addresses where reusable_at <= now()`
  await db`
    insert into erased_addresses (address_hash, reusable_at)
    values (sha256(convert_to(lower(${email}), 'UTF8')), now() + make_interval(days => ${days}))
    on conflict (address_hash) do update set reusable_at = excluded.reusable_at`
}
