// Two API replicas on one Postgres, each with its PAT cache and credential feed (api/credentials/).
// Every test first proves the token is served from replica B's cache, then narrows it through replica A or SQL:
// B must answer the new state on the very next use, whatever its feed is doing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CREDENTIAL_FEED_NAME } from '../../api/credentials/feed'
import { startApi, type TestApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { bearer, memberOf } from './members'

let a: TestApi
let b: TestApi
// Entries live a minute, not the default 5 s: what this file proves is eviction by the feed, and on a loaded machine
// its waits for a live feed can outlast a 5 s entry, whose expiry would read as a miss.
const settings = { CREDENTIAL_CACHE_TTL_SECONDS: '60' }
beforeAll(async () => {
  ;[a, b] = await Promise.all([startApi(settings), startApi(settings)])
})
afterAll(async () => {
  await Promise.all([a.stop(), b.stop()])
})

const fenceMs = () => b.deps.config.CREDENTIAL_CACHE_FENCE_MS

/** Uses the token on `api` until a request is answered from its cache (a hit, no Postgres read). */
async function cachedOn(api: TestApi, token: string, path = '/tokens/self') {
  const client = bearer(api.url, token)
  // The lookup also wakes a feed that had gone quiet for want of lookups (api/credentials/feed.ts).
  expect((await client.get(path)).status).toBe(200) // fills
  await eventually('a live credential feed', async () => api.deps.pats.staleness() < fenceMs() / 2 || undefined)
  const hits = api.deps.pats.stats.hits
  const res = await client.get(path)
  expect(res.status).toBe(200)
  expect(api.deps.pats.stats.hits).toBe(hits + 1)
  return client
}

/** The backend of one replica's LISTEN connection. */
async function feedBackend(api: TestApi): Promise<number | undefined> {
  const [row] = await a.sql<{ pid: number }[]>`
    select pid from pg_stat_activity
     where application_name = ${`${CREDENTIAL_FEED_NAME}:${api.deps.credentialFeed.replicaId}`} and query ilike 'listen%'`
  return row?.pid
}

describe('PAT cache across replicas', () => {
  test('a revocation answered by A fails on B at the very next use, though B had the token cached', async () => {
    const owner = await tenantOwner(a.url)
    const { id, token } = await patFor(owner.client, ['tenant:read'])
    const onB = await cachedOn(b, token)
    const started = performance.now()
    expect((await owner.client.delete(`/api-keys/${id}`)).status).toBe(200)
    expect(performance.now() - started).toBeGreaterThanOrEqual(fenceMs()) // the writer pays the fence
    const next = await onB.get('/tokens/self')
    expect(next.status).toBe(401)
    expect(next.json.code).toBe('TOKEN_REVOKED')
  })

  test('demoting, disabling and removing a member through A narrow their token on B at once', async () => {
    const owner = await tenantOwner(a.url)
    const m = await memberOf(a.url, a.sql, owner.tenantId, 'admin')
    const { token } = await patFor(m.client, ['tenant:read', 'tenant:manage'])
    const onB = await cachedOn(b, token, '/tenants/current/memberships')
    const path = `/tenants/current/memberships/${m.membershipId}`

    expect((await owner.client.patch(path, { role: 'viewer' })).status).toBe(200)
    const denied = await onB.get('/tenants/current/memberships')
    expect(denied.status).toBe(403)
    expect(denied.json.code).toBe('PERMISSION_DENIED')
    expect((await onB.get('/tokens/self')).json.data.effectivePermissions).toEqual(['tenant:read'])

    expect((await onB.get('/tokens/self')).status).toBe(200)
    expect((await owner.client.patch(path, { status: 'disabled' })).status).toBe(200)
    expect((await onB.get('/tenants/current/storage-bucket')).json.code).toBe('MEMBERSHIP_DISABLED')

    expect((await owner.client.patch(path, { status: 'active' })).status).toBe(200)
    await cachedOn(b, token)
    expect((await owner.client.delete(path)).json.data).toEqual({ removed: true })
    expect((await onB.get('/tokens/self')).json.code).toBe('TOKEN_REVOKED')
  })

  test('a replica whose feed is stalled stops serving from its cache, and resumes when the feed does', async () => {
    const owner = await tenantOwner(a.url)
    const { id, token } = await patFor(owner.client, ['tenant:read'])
    const onB = await cachedOn(b, token)
    const pid = await feedBackend(b)
    expect(pid).toBeNumber()
    const fenced = b.deps.pats.stats.fenced
    process.kill(pid!, 'SIGSTOP') // B's LISTEN backend freezes: notifications queue up undelivered
    try {
      expect((await owner.client.delete(`/api-keys/${id}`)).status).toBe(200)
      const next = await onB.get('/tokens/self')
      expect(next.json.code).toBe('TOKEN_REVOKED')
      expect(b.deps.pats.stats.fenced).toBeGreaterThan(fenced) // the stale entry was there, and refused
    } finally {
      process.kill(pid!, 'SIGCONT')
    }
    await cachedOn(b, (await patFor(owner.client, ['tenant:read'])).token)
  })

  test('a replica whose feed reconnects forgets everything it may have missed meanwhile', async () => {
    const owner = await tenantOwner(a.url)
    const { id, token } = await patFor(owner.client, ['tenant:read'])
    const onB = await cachedOn(b, token)
    const pid = await feedBackend(b)
    // Revoked in the transaction that cuts B's feed: the notification goes out while B is not listening.
    await a.sql.begin(async (tx) => {
      await tx`select pg_terminate_backend(${pid!}::int)`
      await tx`update api_keys set revoked_at = now() where id = ${id}`
    })
    await eventually('B listening again', async () => ((await feedBackend(b)) ?? pid) !== pid || undefined)
    await eventually('B proving its new feed live', async () => b.deps.pats.staleness() < fenceMs() / 2 || undefined)
    const next = await onB.get('/tokens/self')
    expect(next.json.code).toBe('TOKEN_REVOKED')
  })

  test('changes made in SQL by an operator evict too; last-used bookkeeping does not', async () => {
    const owner = await tenantOwner(a.url)
    const m = await memberOf(a.url, a.sql, owner.tenantId, 'researcher')
    const mine = await patFor(m.client, ['tenant:read'])
    const onB = await cachedOn(b, mine.token)

    await b.deps.lastUsed.flush() // writes api_keys.last_used_at for this key
    await Bun.sleep(fenceMs() / 2)
    // The entry is served only while B's feed is live; on a loaded machine a heartbeat can come back late (a full run
    // read a miss here), so the read waits for a fresh one: a miss then can only mean the entry was evicted.
    await eventually('B proving its feed live', async () => b.deps.pats.staleness() < fenceMs() / 2 || undefined)
    // A hit, or, when a heartbeat came back late again between that wait and the request, a fenced miss, which
    // keeps the entry: never a miss that found no entry, which is what an eviction leaves (a full run read a miss here
    // once more, at a load average of 8).
    const { stats } = b.deps.pats
    const [served, missed] = [stats.hits + stats.fenced, stats.misses - stats.fenced]
    expect((await onB.get('/tokens/self')).status).toBe(200)
    expect([stats.hits + stats.fenced, stats.misses - stats.fenced]).toEqual([served + 1, missed])

    await a.sql`update users set status = 'disabled' where id = ${m.userId}`
    await Bun.sleep(fenceMs()) // an operator's SQL has no fence() of its own; delivery itself takes milliseconds
    expect((await onB.get('/tokens/self')).status).toBe(401)
    await a.sql`update users set status = 'active' where id = ${m.userId}`
    await b.deps.pats.fence() // B cached the disabled user on the 401 above: re-enabling, too, shows after the feed delivers

    await cachedOn(b, mine.token)
    await a.sql`update memberships set expires_at = now() where id = ${m.membershipId}`
    await Bun.sleep(fenceMs())
    expect((await onB.get('/tenants/current/storage-bucket')).json.code).toBe('MEMBERSHIP_EXPIRED')
  })

  test('lastUsedAt of /tokens/self is the previous use, also when served from the cache', async () => {
    const owner = await tenantOwner(a.url)
    const { token } = await patFor(owner.client, ['tenant:read'])
    const onB = bearer(b.url, token)
    expect((await onB.get('/tokens/self')).json.data.lastUsedAt).toBeNull()
    const before = Date.now()
    await onB.get('/tokens/self')
    const third = await onB.get('/tokens/self')
    expect(new Date(third.json.data.lastUsedAt).getTime()).toBeGreaterThanOrEqual(before - 5)
    expect(new Date(third.json.data.lastUsedAt).getTime()).toBeLessThanOrEqual(Date.now())
  })
})
