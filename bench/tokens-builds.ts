// The hot-path row (GET /v1/tokens/self with a PAT) of two builds in one run: another checkout's API process beside
// this one's, on the same cores, paired round by round, with the server CPU each request cost (the harness reads it from
// /proc, so a busy neighbour moves it far less than the rate). What a change to the request path costs or saves, measured rather
// than assumed: `bun bench/tokens-builds.ts --base /path/to/other/checkout` (a `git worktree add` of the commit before).
// The other checkout runs its own api/main.ts with BENCH_HELLO=true, which builds before the benchmarks mounted their
// own baselines read.
import { benchmark } from './harness'
import { tokensSelf } from './rows'

await benchmark('tokens-builds', { base: { type: 'string' } }, async (h) => {
  const base = h.flags.base as string | undefined
  if (!base) throw new Error('--base <checkout>: the build to compare this one with')
  const before = await h.api((await h.postgres()).url, { entry: `${base}/api/main.ts`, env: { BENCH_HELLO: 'true' } })
  const after = await h.api((await h.postgres()).url)
  const BASE = `${tokensSelf.name}, base build`
  return {
    baselines: [h.http(before, { ...tokensSelf, name: BASE, target: undefined, maxP99Ms: undefined })],
    rows: [h.http(after, { ...tokensSelf, name: `${tokensSelf.name}, this build`, target: 0.9, targetOf: BASE, maxP99Ms: undefined })],
    paired: true,
    rounds: 6,
  }
})
