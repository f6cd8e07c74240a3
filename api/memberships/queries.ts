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
}

const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

function whereOf(db: Db, f: MemberFilter) {
  const status = !f.status
    ? db`m.status <> 'removed'`
    : f.status === 'active'
      ? db`m.status = 'active' and (m.expires_at is null or m.expires_at > now())`
      : f.status === 'expired'
        ? db`(m.status = 'expired' or (m.status = 'active' and m.expires_at <= now()))`
        : db`m.status = ${f.status}`
  const role = f.role ? db`and m.role = ${f.role}` : db``
  const q = f.q ? db`and (u.email ilike ${likePattern(f.q)} or u.display_name ilike ${likePattern(f.q)})` : db``
  return db`m.tenant_id = ${f.tenantId} and ${status} ${role} ${q}`
}

export async function listMembers(db: Db, f: MemberFilter, p: MemberPage): Promise<(MemberRow & { sort_key: string })[]> {
  const key = SORT_KEYS[p.sortBy]
  const dir = db.unsafe(p.desc ? 'desc' : 'asc')
  const cmp = db.unsafe(p.desc ? '<' : '>')
  const after = p.after
    ? db`and (${db.unsafe(key.expr)}, m.id) ${cmp} (${p.after.k}::text::${db.unsafe(key.type)}, ${p.after.id}::uuid)`
    : db``
  return db<(MemberRow & { sort_key: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${db.unsafe(key.text)} as sort_key
      from memberships m join users u on u.id = m.user_id
     where ${whereOf(db, f)} ${after}
     order by ${db.unsafe(key.expr)} ${dir}, m.id ${dir}
     limit ${p.limit}`
}

/** The whole query's match count. Without `q` it reads the maintained per-role/status counts and corrects for
 *  memberships whose expiry has passed (an index range, few rows); with `q` it counts the matches. */
export async function countMembers(db: Db, f: MemberFilter): Promise<number> {
  if (f.q) {
    const [row] = await db<{ n: number }[]>`select count(*)::int as n from memberships m join users u on u.id = m.user_id where ${whereOf(db, f)}`
    return row!.n
  }
  const role = f.role ? db`and role = ${f.role}` : db``
  const stored = f.status === 'active' || f.status === 'expired' || f.status === 'disabled' || f.status === 'removed'
    ? db`and status = ${f.status}` : db`and status <> 'removed'`
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

export async function countOtherActiveOwners(db: Db, tenantId: string, exceptMembershipId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from memberships
     where tenant_id = ${tenantId} and id <> ${exceptMembershipId} and role = 'owner' and status = 'active'
       and (expires_at is null or expires_at > now())`
  return row!.n
}

/** The version comparison sits in the UPDATE itself, so a stale If-Match never writes. */
export async function updateMember(db: Db, tenantId: string, id: string, expectedVersion: number | null, change: {
  role?: Role; status?: 'active' | 'disabled'; expiresAt?: Date | null
}): Promise<boolean> {
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

/** Sessions sitting in a removed membership lose their tenant (they stay signed in, tenant-less). */
export async function detachSessions(db: Db, membershipId: string): Promise<number> {
  const rows = await db`update sessions set membership_id = null where membership_id = ${membershipId} returning 1`
  return rows.length
}
