// The routes benchmark: `bun bench/run.ts [--only <name part>] [--profile]` plus the harness's flags (bench/harness.ts:
// --quick, --duration, --warmup, --connections, --threads, --rounds, --generator). Postgres and the API on free ports,
// every row of bench/rows.ts driven by the load generator, read against the bare Elysia ceiling and the app's own
// hellos measured before and after the rows. Results in bench/results/routes.json.
import { benchmark, RESULTS } from './harness'
import { appHello, bunHello, rows } from './rows'

await benchmark('routes', {
  only: { type: 'string' },
  // The API writes a CPU profile (markdown) to bench/results/ when it stops.
  profile: { type: 'boolean', default: false },
}, async (h) => {
  const pg = await h.postgres()
  const api = await h.api(pg.url, { args: h.flags.profile ? ['--cpu-prof-md', `--cpu-prof-dir=${RESULTS}`] : [] })
  const only = h.flags.only as string | undefined
  return {
    baselines: [h.http(api, appHello), h.http(api, bunHello)],
    rows: rows.filter((r) => !only || r.name.includes(only)).map((r) => h.http(api, r)),
  }
})
