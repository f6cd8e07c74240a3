// The cache's own rules, on an injected clock; the cross-replica behaviour they add up to is in
// credential-replicas.test.ts, against real replicas and Postgres.
import { describe, expect, test } from 'bun:test'
import { CredentialCache } from '../../api/credentials/cache'

const ids = () => ({ apiKeyId: crypto.randomUUID(), membershipId: crypto.randomUUID(), userId: crypto.randomUUID(), tenantId: crypto.randomUUID() })

function cacheAt(opts: Partial<ConstructorParameters<typeof CredentialCache>[0]> = {}) {
  const clock = { t: 1_000 }
  const cache = new CredentialCache<string>({ fenceMs: 500, ttlMs: 5_000, maxEntries: 100, ...opts }, () => clock.t)
  cache.feedStarted()
  cache.confirm(clock.t)
  return { cache, clock }
}

describe('CredentialCache', () => {
  test('serves an entry only while its own heartbeat came back less than the fence ago', () => {
    const { cache, clock } = cacheAt()
    cache.fill('a', ids(), 'A', cache.generation)
    expect(cache.get('a')).toBeDefined()
    clock.t += 499
    expect(cache.get('a')).toBeDefined()
    clock.t += 1
    expect(cache.get('a')).toBeUndefined()
    expect(cache.stats.fenced).toBe(1)
    cache.confirm(clock.t - 100) // a heartbeat sent 100 ms ago arrives
    expect(cache.get('a')).toBeDefined()
  })

  test('a row looked up while an eviction arrived is answered but not kept', () => {
    const { cache } = cacheAt()
    const before = cache.generation
    cache.evict(`k:${crypto.randomUUID()}`) // any change lands while the lookup is in flight
    const served = cache.fill('a', ids(), 'A', before)
    expect(served).toBe('A')
    expect(cache.get('a')).toBeUndefined()
    cache.fill('a', ids(), 'A', cache.generation)
    expect(cache.get('a')).toBeDefined()
  })

  test('evicts by api key, membership, user and tenant, and leaves the rest', () => {
    const { cache } = cacheAt()
    const rows = [ids(), ids(), ids(), ids(), ids()]
    rows.forEach((r, i) => {
      cache.fill(String(i), r, String(i), cache.generation)
    })
    cache.evict(`k:${rows[0]!.apiKeyId}`)
    cache.evict(`m:${rows[1]!.membershipId}`)
    cache.evict(`u:${rows[2]!.userId}`)
    cache.evict(`t:${rows[3]!.tenantId}`)
    expect([0, 1, 2, 3, 4].map((i) => cache.get(String(i)) !== undefined)).toEqual([false, false, false, false, true])
    cache.evict('something-new:1')
    expect(cache.size).toBe(0)
  })

  test('a restarted feed starts empty and ignores heartbeats sent before it listened', () => {
    const { cache, clock } = cacheAt()
    cache.fill('a', ids(), 'A', cache.generation)
    const sentBefore = clock.t
    clock.t += 10
    cache.feedStarted()
    expect(cache.size).toBe(0)
    cache.confirm(sentBefore)
    cache.fill('a', ids(), 'A', cache.generation)
    expect(cache.get('a')).toBeUndefined()
    cache.confirm(clock.t)
    expect(cache.get('a')).toBeDefined()
  })

  test('entries are re-read after the TTL; the oldest goes first when full; fenceMs 0 keeps nothing', () => {
    const { cache, clock } = cacheAt({ maxEntries: 2 })
    cache.fill('a', ids(), 'A', cache.generation)
    clock.t += 100
    cache.confirm(clock.t)
    cache.fill('b', ids(), 'B', cache.generation)
    clock.t += 100
    cache.confirm(clock.t)
    cache.fill('c', ids(), 'C', cache.generation)
    expect(cache.get('a')).toBeUndefined()
    expect(cache.get('b')).toBeDefined()
    clock.t += 4_850
    cache.confirm(clock.t)
    expect(cache.get('b')).toBeDefined()
    clock.t += 60
    cache.confirm(clock.t)
    expect(cache.get('b')).toBeUndefined() // 5,010 ms old
    expect(cache.get('c')).toBeDefined() // 4,910 ms old

    const off = new CredentialCache<string>({ fenceMs: 0, ttlMs: 5_000, maxEntries: 10 })
    off.feedStarted()
    off.confirm(off.now())
    off.fill('a', ids(), 'A', off.generation)
    expect(off.size).toBe(0)
  })

  test('fence() waits at least the fence, and not at all when the cache is off', async () => {
    // Orderings against timers of the test's own, not durations: a timer due at the fence fires before fence()
    // resolves; with the cache off, fence() resolves before even a timer due at once.
    const order: string[] = []
    const { cache } = cacheAt({ fenceMs: 120 })
    setTimeout(() => order.push('fence due'), 120)
    await cache.fence()
    order.push('fenced')
    const off = new CredentialCache<string>({ fenceMs: 0, ttlMs: 1, maxEntries: 1 })
    const due = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('next timer')
        resolve()
      }, 0),
    )
    await off.fence()
    order.push('fenced (off)')
    await due
    expect(order).toEqual(['fence due', 'fenced', 'fenced (off)', 'next timer'])
  })
})
