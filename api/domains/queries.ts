import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export interface TenantDomainRow {
  id: string
  tenant_id: string
  domain: string
  challenge_token: string
  verified_at: Date | null
  created_at: Date
}

/** Adding a domain the tenant already lists answers the existing claim (same token), so a retry is harmless;
 *  `inserted` says which it was (xmax is 0 only on a row this statement inserted). */
export async function insertTenantDomain(db: Db, tenantId: string, domain: string, token: string): Promise<TenantDomainRow & { inserted: boolean }> {
  const [row] = await db<(TenantDomainRow & { inserted: boolean })[]>`
    insert into tenant_domains (tenant_id, domain, challenge_token) values (${tenantId}, ${domain}, ${token})
    on conflict (tenant_id, domain) do update set domain = excluded.domain
    returning *, (xmax = 0) as inserted`
  return row!
}

export async function listTenantDomains(db: Db, tenantId: string, after: CreatedCursor | null, limit: number) {
  return db<(TenantDomainRow & { cursor_at: string })[]>`
    select *, ${db.unsafe(CURSOR_AT)} from tenant_domains
     where tenant_id = ${tenantId} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

export async function findTenantDomain(db: Db, tenantId: string, id: string): Promise<TenantDomainRow | undefined> {
  const [row] = await db<TenantDomainRow[]>`select * from tenant_domains where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** undefined when another tenant holds the domain verified (the partial unique index refuses a second holder). */
export async function markTenantDomainVerified(db: Db, tenantId: string, id: string): Promise<TenantDomainRow | undefined> {
  const [row] = await db<TenantDomainRow[]>`
    update tenant_domains d set verified_at = coalesce(d.verified_at, now())
     where d.tenant_id = ${tenantId} and d.id = ${id}
       and not exists (select 1 from tenant_domains o where o.domain = d.domain and o.tenant_id <> d.tenant_id and o.verified_at is not null)
    returning *`
  return row
}

export async function deleteTenantDomain(db: Db, tenantId: string, id: string): Promise<TenantDomainRow | undefined> {
  const [row] = await db<TenantDomainRow[]>`delete from tenant_domains where tenant_id = ${tenantId} and id = ${id} returning *`
  return row
}

/** The tenants that have proven control of `domain` (at most one, by the partial unique index). */
export async function findTenantsVerifyingDomain(db: Db, domain: string): Promise<string[]> {
  const rows = await db<{ tenant_id: string }[]>`select tenant_id from tenant_domains where domain = ${domain} and verified_at is not null`
  return rows.map((r) => r.tenant_id)
}
