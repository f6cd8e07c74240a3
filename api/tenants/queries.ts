import type { Db } from '../platform/db'

export interface TenantRow {
  id: string
  name: string
  slug: string
  version: number
  created_at: Date
}

export interface MembershipRow {
  id: string
  tenant_id: string
  user_id: string
  role: 'owner' | 'admin' | 'researcher' | 'billing_admin' | 'viewer'
  status: 'active' | 'disabled' | 'expired' | 'removed'
}

/** null when the slug is taken. */
export async function insertTenant(db: Db, t: { name: string; slug: string }): Promise<TenantRow | null> {
  const [row] = await db<TenantRow[]>`insert into tenants (name, slug) values (${t.name}, ${t.slug}) on conflict (slug) do nothing returning *`
  return row ?? null
}

export async function insertMembership(db: Db, m: { tenantId: string; userId: string; role: MembershipRow['role'] }): Promise<MembershipRow> {
  const [row] = await db<MembershipRow[]>`
    insert into memberships (tenant_id, user_id, role) values (${m.tenantId}, ${m.userId}, ${m.role})
    returning id, tenant_id, user_id, role, status`
  return row!
}

export async function countLiveMemberships(db: Db, userId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from memberships where user_id = ${userId} and status <> 'removed'`
  return row!.n
}
