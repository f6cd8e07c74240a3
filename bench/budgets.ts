// What shared request budgets cost the hot path: `bun bench/budgets.ts` plus the harness's flags. The same build
// twice against one Postgres, RATE_BUDGETS_SHARED=false (each replica its own buckets) and true (leases from the
// shared bucket), with a budget the load spends but never exhausts (6M a minute: a lease of 2% renews about every
// 120,000 requests); GET /v1/tokens/self with shared budgets must keep ≥ 90% of the per-replica rate.
// Results in bench/results/budgets.json.
import { benchmark } from './harness'
import { rows } from './rows'

const tokens = rows.find((r) => r.path === '/v1/tokens/self')!
const LOCAL = 'GET /v1/tokens/self (PAT), per-replica budgets'
const BUDGETS = { RATE_LIMIT_PRINCIPAL_PER_MINUTE: '6000000', RATE_LIMIT_TENANT_PER_MINUTE: '6000000' }

await benchmark('budgets', {}, async (h) => {
  const pg = await h.postgres()
  const local = await h.api(pg.url, { env: { ...BUDGETS, RATE_BUDGETS_SHARED: 'false' } })
  const shared = await h.api(pg.url, { env: { ...BUDGETS, RATE_BUDGETS_SHARED: 'true' } })
  return {
    baselines: [h.http(local, { ...tokens, name: LOCAL, target: undefined, maxP99Ms: undefined })],
    rows: [h.http(shared, { ...tokens, name: 'GET /v1/tokens/self (PAT), shared budgets', target: 0.9, targetOf: LOCAL, maxP99Ms: undefined })],
    rounds: 3,
  }
})
