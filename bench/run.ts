// The routes benchmark: `bun bench/run.ts [--only <name part>] [--profile]` plus the harness's flags (bench/harness.ts:
// --quick, --duration, --warmup, --connections, --threads, --rounds, --generator). Postgres and the API on free ports,
// every row of bench/rows.ts driven by the load generator, read against the bare Elysia ceiling and the app's own
// hellos measured before and after the rows; the PAT read once more against a second API writing its access log.
// Results in bench/results/routes.json.
import { benchmark, RESULTS } from './harness'
import { appHello, bunHello, rows, tokensSelf } from './rows'

await benchmark(
  'routes',
  {
    only: { type: 'string' },
    // Each API writes a CPU profile (markdown) to bench/results/ when it stops.
    profile: { type: 'boolean', default: false },
  },
  async (h) => {
    const pg = await h.postgres()
    const args = h.flags.profile ? ['--cpu-prof-md', `--cpu-prof-dir=${RESULTS}`] : []
    const api = await h.api(pg.url, { args })
    const only = h.flags.only as string | undefined
    const picked = rows.filter((r) => !only || r.name.includes(only)).map((r) => h.http(api, r))
    // The production default: LOG_LEVEL=info, one access log line a request, written by the process to a file
    // (bench/results/routes-api-2.log) rather than a terminal. Same database, same ceiling.
    if (!only || tokensSelf.name.includes(only)) {
      const logged = await h.api(pg.url, { args, env: { LOG_LEVEL: 'info' } })
      picked.push(h.http(logged, { ...tokensSelf, name: `${tokensSelf.name}, access log to a file` }))
    }
    return { baselines: [h.http(api, appHello), h.http(api, bunHello)], rows: picked }
  },
)
