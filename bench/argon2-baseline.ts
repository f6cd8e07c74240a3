// Bare argon2id: how many password verifications a second this machine's cores do, with the parameters the API
// uses (api/identity/password-hasher.ts) and its hashing child's allocator settings, `concurrency` at a time on Bun's thread pool in this process. Run as a
// script it prints one JSON line; every sign-in benchmark (bench/sign-in.ts, bench/audit.ts) measures it through
// `argon2Baseline`, in a process of its own so the runner's work does not share its event loop.
// Usage: bun bench/argon2-baseline.ts <seconds> <concurrency>
import { join } from 'node:path'
import { HASHER_ALLOCATOR, ARGON2 as PARAMS } from '../api/identity/password-hasher'
import type { Harness, Measure } from './harness'

export const ARGON2 = 'bare argon2id verifications'

/** Bare argon2id runs with the allocator settings the API's hashing child has (api/identity/password-hasher.ts), so
 *  a sign-in's ratio says what the rest of a sign-in costs, not how the two allocators differ. */
export const baselineEnv = () => ({ ...process.env, ...HASHER_ALLOCATOR })

/** The baseline of a password sign-in row: this file as its own process, for the harness's duration, at
 *  --connections verifications in flight. */
export const argon2Baseline = (h: Harness): Measure => ({
  name: ARGON2,
  async run() {
    const cmd = [process.execPath, import.meta.path, String(h.settings.duration), String(h.settings.connections)]
    const proc = Bun.spawn(cmd, { cwd: join(import.meta.dir, '..'), stdout: 'pipe', env: baselineEnv() })
    const out = await new Response(proc.stdout).text()
    if ((await proc.exited) !== 0) throw new Error(`argon2 baseline failed: ${out}`)
    return { rate: (JSON.parse(out.trim().split('\n').at(-1)!) as { perSecond: number }).perSecond }
  },
})

if (import.meta.main) {
  const seconds = Number(process.argv[2] ?? 5)
  const concurrency = Number(process.argv[3] ?? 32)
  const password = 'correct horse battery staple'
  const hash = await Bun.password.hash(password, PARAMS)
  let done = 0
  const deadline = performance.now() + seconds * 1000
  const start = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        if (!(await Bun.password.verify(password, hash))) throw new Error('verify failed')
        done++
      }
    }),
  )
  console.log(JSON.stringify({ verifies: done, perSecond: done / ((performance.now() - start) / 1000) }))
}
