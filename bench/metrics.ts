// What the metrics cost the hot path: `bun bench/metrics.ts` plus the harness's flags. The same build twice against
// one Postgres, METRICS=false and METRICS=true (the scrape listener up, every response observed), each in its own
// process, driven alternately over 3 rounds; GET /v1/tokens/self with metrics on must keep ≥ 95% of it with them off.
// Results in bench/results/metrics.json.
import { benchmark } from './harness'
import { rows } from './rows'

const tokens = rows.find((r) => r.path === '/v1/tokens/self')!
const OFF = 'GET /v1/tokens/self (PAT), METRICS=false'

await benchmark('metrics', {}, async (h) => {
  const pg = await h.postgres()
  const off = await h.api(pg.url, { env: { METRICS: 'false' } })
  const on = await h.api(pg.url, { env: { METRICS: 'true' } })
  return {
    baselines: [h.http(off, { ...tokens, name: OFF, target: undefined, maxP99Ms: undefined })],
    rows: [h.http(on, { ...tokens, name: 'GET /v1/tokens/self (PAT), METRICS=true', target: 0.95, targetOf: OFF, maxP99Ms: undefined })],
    rounds: 3,
  }
})
