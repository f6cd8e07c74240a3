// Password sign-in against bare argon2id on the same cores, in the same run: `bun bench/sign-in.ts` plus the harness's
// flags (3 rounds of 5 s by default). Every sign-in is one argon2id verification, so sign-in cannot beat bare
// argon2id (bench/argon2-baseline.ts, its own process, the API's parameters, --connections at a time); the ratio says
// how much of the machine the rest of sign-in costs. Target ≥ 90%. Results in bench/results/sign-in.json.
import { join } from 'node:path'
import { benchmark, ROOT, type Measure } from './harness'
import { signIn } from './rows'

const ARGON2 = 'bare argon2id verifications'

await benchmark('sign-in', {}, async (h) => {
  if (!process.env.BENCH_DURATION && !h.flags.duration && !h.flags.quick) h.settings.duration = 5
  const api = await h.api((await h.postgres()).url)
  const argon2: Measure = {
    name: ARGON2,
    async run() {
      const cmd = [process.execPath, join(import.meta.dir, 'argon2-baseline.ts'), String(h.settings.duration), String(h.settings.connections)]
      const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: 'pipe' })
      const out = await new Response(proc.stdout).text()
      if ((await proc.exited) !== 0) throw new Error(`argon2 baseline failed: ${out}`)
      return { rate: (JSON.parse(out.trim().split('\n').at(-1)!) as { perSecond: number }).perSecond }
    },
  }
  return { baselines: [argon2], rows: [h.http(api, { ...signIn, target: 0.9, targetOf: ARGON2 })], rounds: 3 }
})
