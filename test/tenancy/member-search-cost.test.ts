// What a member page costs the database in a large tenant, counted in rows (pg_stat_xact_user_tables, exact for one
// transaction and no one else's), not in time: the machine is shared.
import { describe, expect, test } from 'bun:test'
import type { Principal } from '../../api/identity/service'
import type { RequestContext } from '../../api/identity/context'
import { listMemberships } from '../../api/memberships/service'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'

const api = useApi()
const MEMBERS = 20_000
// "Member 10" matches members 10, 100-109, 1000-1099 and 10000-10999: 1,111, which the planner takes for spread
// through the tenant, though in join order they come after the 9,000 members from 20000 down to 11000.
const MATCHES = 1111

/** One page from the service, and the rows it fetched from memberships and users through an index: the walk a bad
 *  plan takes probes users once per member it passes. Sequential reads are not counted: a scan of the tenant is
 *  cheap next to as many probes, and the planner rightly scans a small one. */
async function pageCost(tenantId: string, query: Record<string, string | number>) {
  const ctx = { principal: { membership: { id: 'x', tenantId, role: 'owner', status: 'active', expiresAt: null } } as unknown as Principal } as RequestContext
  // One reserved connection in one transaction: the statistics are this transaction's alone.
  const conn = await api.sql.reserve()
  try {
    await conn`begin`
    const page = await listMemberships({ sql: conn, keys: api.deps.keys }, ctx, { pageSize: 25, ...query } as never)
    const [read] = await conn<{ n: number }[]>`
      select coalesce(sum(idx_tup_fetch), 0)::int as n from pg_stat_xact_user_tables where relname in ('memberships', 'users')`
    return { page, fetched: read!.n }
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
})
