// What a member page costs the database in a large tenant, counted in rows (pg_stat_xact_user_tables around the work,
// in one transaction: exact, and no one else's), not in time: the machine is shared.
import { describe, expect, test } from 'bun:test'
import type { Principal } from '../../api/identity/service'
import type { RequestContext } from '../../api/identity/context'
import { countMembers } from '../../api/memberships/queries'
import { listMemberships } from '../../api/memberships/service'
import type { Sql } from '../../api/platform/db'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'

const api = useApi()
const MEMBERS = 20_000
// "Member 10" matches members 10, 100-109, 1000-1099 and 10000-10999: 1,111, which the planner takes for spread
// through the tenant, though in join order they come after the 9,000 members from 20000 down to 11000.
const MATCHES = 1111

/** Rows this connection's transaction fetched from `tables` through an index (and by scans, with `scans`). Read as
 *  a difference around the work: the counters may still hold the backend's earlier transactions' reads. */
async function indexFetches(conn: Sql, tables: string[], scans = false): Promise<number> {
  const [row] = await conn<{ n: number }[]>`
    select coalesce(sum(idx_tup_fetch + case when ${scans} then seq_tup_read else 0 end), 0)::int as n
      from pg_stat_xact_user_tables where relname = any(${tables})`
  return row!.n
}

/** One page from the service, and the rows it fetched from memberships and users through an index: the walk a bad
 *  plan takes probes users once per member it passes. Sequential reads are not counted: a scan of the tenant is
 *  cheap next to as many probes, and the planner rightly scans a small one. */
async function pageCost(tenantId: string, query: Record<string, string | number>) {
  const membership = { id: 'x', tenantId, role: 'owner', status: 'active', expiresAt: null } as const
  const ctx = { principal: { membership } as unknown as Principal, membership } as unknown as RequestContext
  // One reserved connection in one transaction: the statistics are this transaction's alone.
  const conn = await api.sql.reserve()
  try {
    await conn`begin`
    const before = await indexFetches(conn, ['memberships', 'users'])
    const page = await listMemberships({ sql: conn, keys: api.deps.keys }, ctx, { pageSize: 25, ...query } as never)
    return { page, fetched: (await indexFetches(conn, ['memberships', 'users'])) - before }
  } finally {
    await conn`rollback`
    conn.release()
  }
}

/** countMembers alone, and the rows it read from users, by index or by scan. */
async function countCost(tenantId: string, q: string) {
  const conn = await api.sql.reserve()
  try {
    await conn`begin`
    const before = await indexFetches(conn, ['users'], true)
    const n = await countMembers(conn, { tenantId, q })
    return { n, usersRead: (await indexFetches(conn, ['users'], true)) - before }
  } finally {
    await conn`rollback`
    conn.release()
  }
}

describe('member pages of a 20,000-member tenant', () => {
  test('a search with few matches, all joined late, reads its matches and not the tenant', async () => {
    const owner = await tenantOwner(api.url)
    const tag = `cost${Date.now().toString(36)}`
    // Member i joined i seconds ago, so oldest first is 20000, 19999, ...
    await api.sql`
      insert into users (email, display_name)
      select ${tag} || '-' || i || '@example.test', 'Member ' || i from generate_series(1, ${MEMBERS}::int) i`
    await api.sql`
      insert into memberships (tenant_id, user_id, role, created_at)
      select ${owner.tenantId}, id, 'viewer', now() - make_interval(secs => split_part(split_part(email, '-', 2), '@', 1)::int)
        from users where email like ${`${tag}-%`}`
    await api.sql`analyze users`
    await api.sql`analyze memberships`
    const emails = (from: number) => Array.from({ length: 25 }, (_, k) => `${tag}-${from - k}@example.test`)

    const { page, fetched } = await pageCost(owner.tenantId, { q: 'Member 10' })
    expect(page.totalCount).toBe(MATCHES)
    expect(page.items.map((m) => m.email)).toEqual(emails(10999))
    // The count and the page each fetch the matching users; walking the tenant in join order to find them fetched
    // the 9,000 members before them and each one's user (19,173 rows).
    expect(fetched).toBeLessThan(3 * MATCHES)

    // The next page continues where the first stopped, at the same cost.
    const next = await pageCost(owner.tenantId, { q: 'Member 10', pageToken: page.nextPageToken! })
    expect(next.page.items.map((m) => m.email)).toEqual(emails(10974))
    expect(next.fetched).toBeLessThan(3 * MATCHES)

    // A search matching the whole tenant still walks the join order and stops at a page.
    const dense = await pageCost(owner.tenantId, { q: 'member' })
    expect(dense.page.totalCount).toBe(MEMBERS)
    expect(dense.page.items.map((m) => m.email)).toEqual(emails(MEMBERS))
  }, 60_000)

  test("a search that most of the platform's users match costs what the tenant holds, not what the platform does", async () => {
    const owner = await tenantOwner(api.url)
    const tag = `wide${Date.now().toString(36)}`
    const TENANT = 1000
    const ELSEWHERE = 20_000
    // The tenant's members and, on the rest of the platform, many more accounts the pattern matches as well.
    await api.sql`
      insert into users (email, display_name)
      select ${tag} || '-' || i || '@example.test', 'Member ' || i from generate_series(1, ${TENANT + ELSEWHERE}::int) i`
    await api.sql`
      insert into memberships (tenant_id, user_id, role)
      select ${owner.tenantId}, id, 'viewer' from users where email like ${`${tag}-%`}
       order by split_part(split_part(email, '-', 2), '@', 1)::int limit ${TENANT}`
    await api.sql`analyze users`
    await api.sql`analyze memberships`

    const { page } = await pageCost(owner.tenantId, { q: tag })
    expect(page.totalCount).toBe(TENANT)
    expect(page.items).toHaveLength(25)
    // The count reads the tenant's memberships and no account at all. Before the memberships held their own copies
    // (migration 0023) it joined the accounts: here it read 1,003 of them, and where the planner started from the
    // pattern's matches instead (a large tenant), every account on the platform that the pattern matched.
    const counted = await countCost(owner.tenantId, tag)
    expect(counted.n).toBe(TENANT)
    expect(counted.usersRead).toBe(0)

    // A member's changed name and email reach the search at once.
    const [first] = await api.sql<
      { user_id: string }[]
    >`select user_id from memberships where tenant_id = ${owner.tenantId} and member_email like ${`${tag}-%`} limit 1`
    await api.sql`update users set email = ${`renamed-${tag}@example.test`}, display_name = ${`Renamed ${tag}`} where id = ${first!.user_id}`
    const renamed = await pageCost(owner.tenantId, { q: `Renamed ${tag}` })
    expect(renamed.page.totalCount).toBe(1)
    expect(renamed.page.items[0]!.email).toBe(`renamed-${tag}@example.test`)
    expect((await pageCost(owner.tenantId, { q: `renamed-${tag}@` })).page.totalCount).toBe(1)
  }, 60_000)
})
