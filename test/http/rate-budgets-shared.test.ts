// Request budgets across replicas (docs/api.md "Rate budgets"): two API replicas on one database grant a principal its
// documented budget once, not once each; the per-replica mode (RATE_BUDGETS_SHARED=false) is the control.
import { afterAll, describe, expect, test } from 'bun:test'
import { RateLimiter } from '../../api/http/rate-limit'
import { createDb } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { SharedBudgets } from '../../api/rate-budgets/service'
import { startApi, type TestApi } from '../support/api'
import { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'

const BUDGET = 200
const started: TestApi[] = []
afterAll(async () => {
  await Promise.all(started.map((a) => a.stop()))
})

async function replicas(shared: boolean): Promise<[TestApi, TestApi]> {
  const env = { RATE_LIMIT_PRINCIPAL_PER_MINUTE: String(BUDGET), RATE_LIMIT_TENANT_PER_MINUTE: '0', RATE_BUDGETS_SHARED: String(shared) }
  const pair = (await Promise.all([startApi(env), startApi(env)])) as [TestApi, TestApi]
  started.push(...pair)
  return pair
}

/** Requests of one PAT spread round-robin over both replicas, 20 at a time, until both answer 429: the 200s, and
 *  how long it took from the principal's first request (its bucket's start) to the last answer. */
async function granted([a, b]: [TestApi, TestApi]): Promise<{ ok: number; elapsedMs: number }> {
  const started = performance.now()
  const owner = await tenantOwner(a.url)
  const { token } = await patFor(owner.client, ['tenant:read'])
  const clients = [new Client(a.url).withBearer(token), new Client(b.url).withBearer(token)]
  let ok = 0
  for (let round = 0; round < 40; round++) {
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => clients[i % 2]!.get('/tokens/self').then((r) => r.status)))
    ok += statuses.filter((s) => s === 200).length
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])
    if (statuses.every((s) => s === 429)) break
  }
  return { ok, elapsedMs: performance.now() - started }
}

describe('request budgets across replicas', () => {
  test('per replica (the control): two replicas grant nearly twice the budget', async () => {
    expect((await granted(await replicas(false))).ok).toBeGreaterThan(BUDGET * 1.8)
  })

  test('shared: two replicas grant the budget once, plus no more than it refilled while the test ran', async () => {
    const { ok, elapsedMs } = await granted(await replicas(true))
    // The bucket starts full and refills BUDGET a minute: however slow the loop, nothing beyond that is granted
    // (the one extra token is a fraction refilled before the first lease). Leases left unspent only lower it.
    const refilled = Math.ceil((elapsedMs / 60_000) * BUDGET)
    expect(ok).toBeGreaterThanOrEqual(BUDGET * 0.9)
    expect(ok).toBeLessThanOrEqual(BUDGET + refilled + 1)
  })

  test('the shared bucket is one row per principal; a refused caller gets Retry-After', async () => {
    const [a] = await replicas(true)
    const owner = await tenantOwner(a.url)
    const { token } = await patFor(owner.client, ['tenant:read'])
    const pat = new Client(a.url).withBearer(token)
    // The 429 that ends the loop is the one checked: a second request could find a token refilled (one per 300 ms).
    let refused = await pat.get('/tokens/self')
    while (refused.status !== 429) refused = await pat.get('/tokens/self')
    const rows = await a.sql<{ tokens: number }[]>`select tokens from rate_budgets where kind = 'user' and id = ${owner.userId}`
    expect(rows).toHaveLength(1)
    const [row] = rows
    expect(row!.tokens).toBeLessThan(1)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  test("an unreachable shared store fails open to the replica's own bucket", async () => {
    const unreachable = createDb('postgres://rcp@127.0.0.1:1/none', { max: 1 })
    const local = new RateLimiter()
    const budgets = new SharedBudgets(unreachable, createLogger('silent'), (kind, id, n) => local.admit(kind, id, n))
    try {
      const answers = []
      for (let i = 0; i < 4; i++) answers.push(await budgets.admit('user', 'someone', 3))
      expect(answers.slice(0, 3)).toEqual([0, 0, 0])
      expect(answers[3]).toBeGreaterThan(0)
    } finally {
      await unreachable.end({ timeout: 1 })
    }
  })
})
