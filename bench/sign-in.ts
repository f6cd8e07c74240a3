// Password sign-in against bare argon2id on the same cores, in the same run: `bun bench/sign-in.ts` plus the harness's
// flags (4 rounds of 5 s by default, each sign-in measurement paired with an argon2id one beside it). Every sign-in is
// one argon2id verification, so sign-in cannot beat bare argon2id (bench/argon2-baseline.ts, its own process, the
// API's parameters, --connections at a time); the ratio says how much of the machine the rest of sign-in costs.
// Target ≥ 90%. `--in-process` adds a second API whose argon2id runs in its own process instead of the hashing child
// (bench/api-entry-in-process-hasher.ts, a prototype), paired with the same baseline. Results in
// bench/results/sign-in.json; where a sign-in's CPU goes: bench/sign-in-cpu.ts.
import { ARGON2, argon2Baseline } from './argon2-baseline'
import { benchmark } from './harness'
import { signIn } from './rows'

await benchmark('sign-in', { 'in-process': { type: 'boolean' } }, async (h) => {
  if (!process.env.BENCH_DURATION && !h.flags.duration && !h.flags.quick) h.settings.duration = 5
  const db = (await h.postgres()).url
  const api = await h.api(db)
  const rows = [h.http(api, { ...signIn, target: 0.9, targetOf: ARGON2 })]
  if (h.flags['in-process']) {
    const inProcess = await h.api(db, { entry: 'bench/api-entry-in-process-hasher.ts' })
    rows.push(h.http(inProcess, { ...signIn, name: `${signIn.name}, argon2id in the API's process (prototype)`, target: 0.9, targetOf: ARGON2 }))
  }
  return { baselines: [argon2Baseline(h)], rows, rounds: 4, paired: true }
})
