// The routes benchmark: `bun bench/run.ts [--only <name part>] [--profile]` plus the harness's flags (bench/harness.ts:
// --quick, --duration, --warmup, --connections, --threads, --rounds, --generator). Postgres and the API on free ports,
// every row of bench/rows.ts driven by the load generator, read against the bare Elysia ceiling and the app's own
// hellos measured before and after the rows; the PAT read once more against a second API writing its access log.
// With --only tokens, the project PAT is measured in pairs with the tenant PAT (below).
// Results in bench/results/routes.json.
import { benchmark, RESULTS } from './harness'
import { appHello, bunHello, rows, tokensSelf, tokensSelfProject } from './rows'

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
    const baselines = [h.http(api, appHello), h.http(api, bunHello)]
    // --only tokens: the project token is read against the tenant token measured right beside it, the order swapped
    // every round (the harness's pairs), instead of against a tenant row measured a minute earlier on a machine whose
    // neighbours come and go. The tenant row is then a baseline (its own target against the ceiling is not judged).
    if (only && tokensSelf.name.includes(only) && tokensSelfProject.name.includes(only)) {
      const [tenant] = picked.splice(
        picked.findIndex((m) => m.name === tokensSelf.name),
        1,
      )
      const project = picked.find((m) => m.name === tokensSelfProject.name)!
      Object.assign(project, { targetOf: tokensSelf.name, target: 0.95 })
      return { baselines: [...baselines, tenant!], rows: picked, paired: true }
    }
    return { baselines, rows: picked }
  },
)
