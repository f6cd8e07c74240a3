// A replica's credential feed beats only while tokens are looked up on it: an idle replica stops (each heartbeat costs
// its process CPU), and the next lookup, answered from Postgres, starts the beats again.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { bearer } from './members'

// 60 fences of 50 ms: quiet after 3 s without a lookup.
const api = useApi({ CREDENTIAL_CACHE_FENCE_MS: '50' })

describe('a quiet credential feed', () => {
  test('stops beating when no token is looked up, and beats again on the next lookup', async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['tenant:read'])
    const client = bearer(api.url, token)
    expect((await client.get('/tokens/self')).status).toBe(200)
    await eventually('a live feed', async () => api.deps.pats.live || undefined)

    // Three seconds after the last lookup the beats stop, so the last proof of the feed only ages.
    await eventually('the feed gone quiet', async () => api.deps.pats.staleness() > 1000 || undefined, 15_000)
    const quiet = api.deps.pats.staleness()
    await Bun.sleep(500)
    expect(api.deps.pats.staleness()).toBeGreaterThan(quiet + 400)
    expect(api.deps.pats.live).toBe(false)

    // A lookup on a quiet feed is answered (from Postgres), and wakes the feed.
    const misses = api.deps.pats.stats.misses
    expect((await client.get('/tokens/self')).status).toBe(200)
    expect(api.deps.pats.stats.misses).toBeGreaterThan(misses)
    await eventually('the feed live again', async () => api.deps.pats.live || undefined)
    const hits = api.deps.pats.stats.hits
    expect((await client.get('/tokens/self')).status).toBe(200)
    expect(api.deps.pats.stats.hits).toBe(hits + 1)
  }, 60_000)
})
