import type { Db } from '../platform/db'
import { microsecondText } from '../platform/keyset'
import type { Role } from '../identity/permissions'

export type MembershipStatus = 'active' | 'disabled' | 'expired' | 'removed'

export interface MemberRow {
  id: string
  tenant_id: string
  user_id: string
  email: string
  display_name: string | null
  role: Role
  /** What the member can do now: a stored 'active' whose expires_at has passed reads as 'expired'. */
  status: MembershipStatus
  expires_at: Date | null
  version: number
  created_at: Date
  updated_at: Date
}

const COLUMNS = `m.id, m.tenant_id, m.user_id, u.email, u.display_name, m.role, m.expires_at, m.version, m.created_at, m.updated_at,
  case when m.status = 'active' and m.expires_at <= now() then 'expired' else m.status end as status`

// Sort keys, each with the SQL expression, its type for the keyset comparison, and its text form for the cursor.
// Role sorts by rank, owner first. Identifiers come from this table only, never from the request. Cursor values
// travel as text (::text::type): the driver would round a timestamptz parameter to milliseconds.
const ROLE_RANK = `array_position(array['owner','admin','billing_admin','researcher','viewer']::text[], m.role)`
export const SORT_KEYS = {
  createdAt: { expr: 'm.created_at', type: 'timestamptz', text: microsecondText('m.created_at') },
  email: { expr: 'lower(u.email)', type: 'text', text: 'lower(u.email)' },
  displayName: { expr: `coalesce(lower(u.display_name), '')`, type: 'text', text: `coalesce(lower(u.display_name), '')` },
  role: { expr: ROLE_RANK, type: 'int', text: `${ROLE_RANK}::text` },
} as const

export interface MemberFilter {
  tenantId: string
  status?: MembershipStatus
  role?: Role
  q?: string
}

/** The sort key's value as text (exact to the microsecond for createdAt) and the id that breaks ties. */
export interface MemberCursor {
  k: string
  id: string
}

export interface MemberPage {
  sortBy: keyof typeof SORT_KEYS
  desc: boolean
  after: MemberCursor | null
  limit: number
  /** Collect every match, then sort: for a search known (by its count) to match at most FEW_MATCHES members. */
  collectMatches?: boolean
}

/** A search's matches can sit anywhere in the sort order, and the planner, taking them for evenly spread, finds a
 *  page of them by walking the tenant's sort index: for "Member 12" in a tenant of 100,000 that read 87,000 members
 *  and their users (680 ms). Up to this many matches are cheaper to collect (from the trigram indexes) and sort. */
export const FEW_MATCHES = 2000

/** "Usable now": active and not past its expiry. The one definition, for every query that needs it. */
export const LIVE = (alias = 'm') => `${alias}.status = 'active' and (${alias}.expires_at is null or ${alias}.expires_at > now())`

const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

function whereOf(db: Db, f: MemberFilter) {
  const status = !f.status
    ? db`m.status <> 'removed'`
    : f.status === 'active'
      ? db.unsafe(LIVE())
      : f.status === 'expired'
        ? db`(m.status = 'expired' or (m.status = 'active' and m.expires_at <= now()))`
        : db`m.status = ${f.status}`
  const role = f.role ? db`and m.role = ${f.role}` : db``
  // The membership's own copies of its member's email and name (migration 0023): a search costs what the tenant
  // holds, not what the platform's users do.
  const q = f.q ? db`and (m.member_email ilike ${likePattern(f.q)} or m.member_name ilike ${likePattern(f.q)})` : db``
  return db`m.tenant_id = ${f.tenantId} and ${status} ${role} ${q}`
}

export async function listMembers(db: Db, f: MemberFilter, p: MemberPage): Promise<(MemberRow & { sort_key: string })[]> {
  const key = SORT_KEYS[p.sortBy]
  const dir = db.unsafe(p.desc ? 'desc' : 'asc')
  const cmp = db.unsafe(p.desc ? '<' : '>')
  const after = (sortExpr: string, idExpr: string) =>
    p.after ? db`and (${db.unsafe(sortExpr)}, ${db.unsafe(idExpr)}) ${cmp} (${p.after.k}::text::${db.unsafe(key.type)}, ${p.after.id}::uuid)` : db``
  if (p.collectMatches) {
    // OFFSET 0 keeps the planner from pulling the ORDER BY ... LIMIT and the cursor into the inner query, so it
    // plans the matching alone (from the memberships the trigram indexes find), as the count does.
    return db<(MemberRow & { sort_key: string })[]>`
      select * from (
        select ${db.unsafe(COLUMNS)}, ${db.unsafe(key.text)} as sort_key, ${db.unsafe(key.expr)} as sort_value
          from memberships m join users u on u.id = m.user_id
         where ${whereOf(db, f)}
        offset 0) matches
       where true ${after('sort_value', 'id')}
       order by sort_value ${dir}, id ${dir}
       limit ${p.limit}`
  }
  return db<(MemberRow & { sort_key: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${db.unsafe(key.text)} as sort_key
      from memberships m join users u on u.id = m.user_id
     where ${whereOf(db, f)} ${after(key.expr, 'm.id')}
     order by ${db.unsafe(key.expr)} ${dir}, m.id ${dir}
     limit ${p.limit}`
}

/** The whole query's match count. Without `q` it reads the maintained per-role/status counts and corrects for
 *  memberships whose expiry has passed (an index range, few rows); with `q` it counts the matches. */
export async function countMembers(db: Db, f: MemberFilter): Promise<number> {
  if (f.q) {
    const [row] = await db<{ n: number }[]>`select count(*)::int as n from memberships m where ${whereOf(db, f)}`
    return row!.n
  }
  const role = f.role ? db`and role = ${f.role}` : db``
  const stored =
    f.status === 'active' || f.status === 'expired' || f.status === 'disabled' || f.status === 'removed'
      ? db`and status = ${f.status}`
      : db`and status <> 'removed'`
  const lapsed = f.status === 'active' ? -1 : f.status === 'expired' ? 1 : 0
  const [row] = await db<{ n: number }[]>`
    select (coalesce((select sum(n) from membership_counts where tenant_id = ${f.tenantId} ${role} ${stored}), 0)
          + ${lapsed}::int * (select count(*) from memberships
                               where tenant_id = ${f.tenantId} ${role} and status = 'active' and expires_at <= now()))::int as n`
  return row!.n
}

export async function findMember(db: Db, tenantId: string, membershipId: string): Promise<MemberRow | undefined> {
  const [row] = await db<MemberRow[]>`
    select ${db.unsafe(COLUMNS)} from memberships m join users u on u.id = m.user_id
     where m.tenant_id = ${tenantId} and m.id = ${membershipId}`
  return row
}

/** Serialises every membership change of one tenant (owner counting must see the others' commits). FOR NO KEY
 *  UPDATE still lets rows referencing the tenant be inserted meanwhile. */
export async function lockTenantMemberships(db: Db, tenantId: string): Promise<void> {
  await db`select 1 from tenants where id = ${tenantId} for no key update`
}

/** Owners other than this membership who will still be owners tomorrow: live and without an expiry. An owner whose
 *  membership ends does not keep the tenant owned, so two owners cannot expire (or demote) each other into none. */
export async function countOtherLastingOwners(db: Db, tenantId: string, exceptMembershipId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from memberships m
     where m.tenant_id = ${tenantId} and m.id <> ${exceptMembershipId} and m.role = 'owner' and m.status = 'active' and m.expires_at is null`
  return row!.n
}

/** The version comparison sits in the UPDATE itself, so a stale If-Match never writes. */
export async function updateMember(
  db: Db,
  tenantId: string,
  id: string,
  expectedVersion: number | null,
  change: {
    role?: Role
    status?: 'active' | 'disabled'
    expiresAt?: Date | null
  },
): Promise<boolean> {
  const rows = await db`
    update memberships
       set role = coalesce(${change.role ?? null}, role),
           status = coalesce(${change.status ?? null}, status),
           expires_at = case when ${change.expiresAt === undefined} then expires_at else ${change.expiresAt ?? null}::timestamptz end,
           version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning 1`
  return rows.length === 1
}

export async function markMemberRemoved(db: Db, tenantId: string, id: string, expectedVersion: number | null): Promise<boolean> {
  const rows = await db`
    update memberships set status = 'removed', version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning 1`
  return rows.length === 1
}

/** Removes every membership of one user (account erasure); answers the ones removed now. */
export async function removeUserMemberships(db: Db, userId: string): Promise<{ id: string; tenant_id: string }[]> {
  return db<{ id: string; tenant_id: string }[]>`
    update memberships set status = 'removed', version = version + 1, updated_at = now()
     where user_id = ${userId} and status <> 'removed'
    returning id, tenant_id`
}

// ── A user's memberships, as sign-in, onboarding and the account views need them ─────────────────────────────

export interface MembershipViewRow {
  id: string
  tenant_id: string
  tenant_name: string
  tenant_slug: string
  role: Role
  status: MembershipStatus
}

export interface NewMembershipRow {
  id: string
  tenant_id: string
  user_id: string
  role: Role
  status: MembershipStatus
}

export async function listUserMemberships(db: Db, userId: string): Promise<MembershipViewRow[]> {
  return db<MembershipViewRow[]>`
    select m.id, m.tenant_id, t.name as tenant_name, t.slug as tenant_slug, m.role,
           case when m.status = 'active' and m.expires_at <= now() then 'expired' else m.status end as status
      from memberships m join tenants t on t.id = m.tenant_id
     where m.user_id = ${userId} and m.status <> 'removed'
     order by m.created_at, m.id`
}

/** The membership of a user in one tenant (any status but removed), or undefined. */
export async function findMembershipOf(db: Db, tenantId: string, userId: string): Promise<{ id: string; status: string } | undefined> {
  const [row] = await db<{ id: string; status: string }[]>`
    select id, status from memberships where tenant_id = ${tenantId} and user_id = ${userId} and status <> 'removed'`
  return row
}

export async function countUserMemberships(db: Db, userId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from memberships where user_id = ${userId} and status <> 'removed'`
  return row!.n
}

/** One membership as a device token's collection judges it again (api/device-authorizations): whether it is usable
 *  now, and its role. Share-locked, so a change of it waits for the collection, or the collection for the change. */
export async function lockMembershipStanding(db: Db, id: string): Promise<{ tenant_id: string; role: Role; live: boolean } | undefined> {
  const [row] = await db<{ tenant_id: string; role: Role; live: boolean }[]>`
    select m.tenant_id, m.role, (${db.unsafe(LIVE())}) as live from memberships m where m.id = ${id} for share`
  return row
}

export async function tenantOfMembership(db: Db, membershipId: string): Promise<string | undefined> {
  const [row] = await db<{ tenant_id: string }[]>`select tenant_id from memberships where id = ${membershipId}`
  return row?.tenant_id
}

export async function isLiveMemberByEmail(db: Db, tenantId: string, email: string): Promise<boolean> {
  const rows = await db`
    select 1 from memberships m join users u on u.id = m.user_id
     where m.tenant_id = ${tenantId} and lower(u.email) = lower(${email}) and ${db.unsafe(LIVE())}`
  return rows.length > 0
}

export async function insertMembership(db: Db, m: { tenantId: string; userId: string; role: Role }): Promise<NewMembershipRow> {
  const [row] = await db<NewMembershipRow[]>`
    insert into memberships (tenant_id, user_id, role) values (${m.tenantId}, ${m.userId}, ${m.role})
    returning id, tenant_id, user_id, role, status`
  return row!
}

/** Joins the user to the tenant with the invited role. A removed, disabled or expired membership comes back
 *  active with that role; a live one is left as it is (an invitation never demotes). */
export async function joinTenant(db: Db, tenantId: string, userId: string, role: Role): Promise<string> {
  const live = db.unsafe(LIVE('memberships'))
  const [row] = await db<{ id: string }[]>`
    insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${userId}, ${role})
    on conflict (tenant_id, user_id) do update
       set role = case when ${live} then memberships.role else excluded.role end,
           status = 'active',
           expires_at = case when ${live} then memberships.expires_at else null end,
           version = memberships.version + 1, updated_at = now()
    returning id`
  return row!.id
}

/** Just-in-time membership: created with the given role when the user has none; an existing one (even disabled
 *  or removed by an administrator) is left as it is. Returns the usable membership, if any, and whether this call
 *  created it (the tenant's log records who was given access, not every sign-in that found it). */
export async function ensureMembership(
  db: Db,
  tenantId: string,
  userId: string,
  role: Role,
): Promise<{ id: string; created: true } | { id: string | null; created: false }> {
  const [inserted] = await db<{ id: string }[]>`
    insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${userId}, ${role}) on conflict (tenant_id, user_id) do nothing returning id`
  if (inserted) return { id: inserted.id, created: true }
  const [row] = await db<{ id: string }[]>`
    select m.id from memberships m where m.tenant_id = ${tenantId} and m.user_id = ${userId} and ${db.unsafe(LIVE())}`
  return { id: row?.id ?? null, created: false }
}

/** The addresses of the tenant's live owners (offboarding mails each of them its export). */
export async function ownerEmails(db: Db, tenantId: string): Promise<string[]> {
  const rows = await db<{ email: string }[]>`
    select u.email from memberships m join users u on u.id = m.user_id
     where m.tenant_id = ${tenantId} and m.role = 'owner' and ${db.unsafe(LIVE())}
     order by u.email`
  return rows.map((r) => r.email)
}
