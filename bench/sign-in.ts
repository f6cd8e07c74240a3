// Password sign-in against bare argon2id on the same cores, in the same run: `bun bench/sign-in.ts` plus the harness's
// flags (4 rounds of 5 s by default, each sign-in measurement paired with an argon2id one beside it). Every sign-in is
// one argon2id verification, so sign-in cannot beat bare argon2id (bench/argon2-baseline.ts, its own process, the
// API's parameters, --connections at a time); the ratio says how much of the machine the rest of sign-in costs.
// Target ≥ 90%. Results in bench/results/sign-in.json.
import { ARGON2, argon2Baseline } from './argon2-baseline'
import { benchmark } from './harness'
import { signIn } from './rows'

await benchmark('sign-in', {}, async (h) => {
  if (!process.env.BENCH_DURATION && !h.flags.duration && !h.flags.quick) h.settings.duration = 5
  const api = await h.api((await h.postgres()).url)
  return { baselines: [argon2Baseline(h)], rows: [h.http(api, { ...signIn, target: 0.9, targetOf: ARGON2 })], rounds: 4, paired: true }
})
