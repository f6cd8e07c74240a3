// Where a password sign-in's CPU goes: `bun bench/sign-in-cpu.ts [--requests 300] [--concurrency 1] [--entry f] [--cheap-hash]
// [--profile dir]` signs in --concurrency at a time (1: one after the other, so CPU time is what each part does, not
// what it waited) and reads from /proc the CPU each process this bench started used meanwhile, less what it uses idle:
// the API (and its threads), its argon2id child (its main thread against its pool threads), Postgres (backends and
// helpers apart) and this process (the client). Printed per sign-in, in µs, with the share of bare argon2id that CPU
// allows at most; then Postgres's CPU for the read statement and the write statement alone, on a connection of their
// own. The machine's neighbours do not count: only processes descended from this one are read. --entry starts another
// API entry (bench/api-entry-in-process-hasher.ts, the prototype); --profile writes the API's CPU profile (Markdown)
// there. A lab, not a target: bench/sign-in.ts is the paired rate.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import type { Sql } from '../api/platform/db'
import { sealAuditBatch } from '../api/audit/queries'
import { findSignInAccount } from '../api/sign-in/queries'
import { findSigner } from '../api/sign-in/policy'
import { openAuditedSession } from '../api/sign-in/service'
import { baselineEnv } from './argon2-baseline'
import { settle } from './cpu-use'
import { benchmark } from './harness'
import { signIn } from './rows'

const TICKS_PER_SECOND = 100 // USER_HZ on Linux

type Proc = { ppid: number; label: string; ticks: number }

function processes(): Map<number, Proc> {
  const out = new Map<number, Proc>()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')
      const script = argv.find((a) => /\.(ts|js)$/.test(a))
      // Postgres names each process by its role ("postgres: walwriter"); a backend by its client ("postgres: rcp db 127.0.0.1(5432) idle").
      const title = comm === 'postgres' && argv[0]?.startsWith('postgres: ') ? argv[0] : undefined
      const role = title ? (/\d+\.\d+\.\d+\.\d+\(\d+\)/.test(title) ? 'postgres: backends' : title.replace(/\s+$/, '')) : undefined
      const label = role ?? (script ? `${comm} ${script.split('/').slice(-2).join('/')}` : comm)
      out.set(Number(d), { ppid: Number(f[1]), label, ticks: Number(f[11]) + Number(f[12]) })
    } catch {
      // ended while listed
    }
  }
  return out
}

/** CPU ticks by label of this process and its descendants. */
function ours(): Map<string, number> {
  const all = processes()
  const mine = new Set([process.pid])
  for (let grew = true; grew; ) {
    grew = false
    for (const [pid, p] of all) {
      if (!mine.has(pid) && mine.has(p.ppid)) {
        mine.add(pid)
        grew = true
      }
    }
  }
  const byLabel = new Map<string, number>()
  for (const pid of mine) {
    const p = all.get(pid)
    if (!p) continue
    byLabel.set(p.label, (byLabel.get(p.label) ?? 0) + p.ticks)
    // The hasher's and the API's threads apart: the main thread (JSON lines, pipes) against the pool (argon2id).
    if (!p.label.startsWith('bun')) continue
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        const thread = Number(tid) === pid ? 'main thread' : `thread ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`
        const key = `  ${p.label.split(' ').at(-1)}: ${thread}`
        byLabel.set(key, (byLabel.get(key) ?? 0) + Number(f[11]) + Number(f[12]))
      }
    } catch {
      // ended while listed
    }
  }
  return byLabel
}

await benchmark(
  'sign-in-cpu',
  { requests: { type: 'string' }, concurrency: { type: 'string' }, entry: { type: 'string' }, profile: { type: 'string' }, 'cheap-hash': { type: 'boolean' } },
  async (h) => {
    // --profile <dir>: the API writes a CPU profile (Markdown) there when it stops.
    const profile = h.flags.profile as string | undefined
    // --entry: another API entry (bench/api-entry-in-process-hasher.ts, the prototype).
    const api = await h.api((await h.postgres()).url, {
      entry: h.flags.entry as string | undefined,
      args: profile ? ['--cpu-prof-md', '--cpu-prof-interval=250', `--cpu-prof-dir=${profile}`] : [],
    })
    const n = Number(h.flags.requests ?? 300)
    // --concurrency: sign-ins in flight (default 1, serial).
    const c = Number(h.flags.concurrency ?? 1)
    const body = JSON.stringify(signIn.body)
    const once = async () => {
      const res = await fetch(`${api.url}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      await res.arrayBuffer()
      if (res.status !== 201) throw new Error(`sign-in: ${res.status}`)
    }
    return {
      baselines: [],
      rows: [
        {
          name: 'serial password sign-ins',
          async setup() {
            await signIn.setup!(api)
            // --cheap-hash: the account's stored hash at argon2id's least cost (8 KiB, one pass), so what is left of a
            // sign-in is its rest: thousands of sign-ins a profile can read, without argon2id drowning them.
            if (h.flags['cheap-hash']) {
              const { email, password } = signIn.body as { email: string; password: string }
              const cheap = await Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 8, timeCost: 1 })
              const sql = postgres(api.databaseUrl, { max: 1, onnotice: () => {} })
              await sql`update users set password_hash = ${cheap} where lower(email) = lower(${email})`
              await sql.end()
            }
            for (let i = 0; i < 100; i++) await once() // the JIT settles
          },
          async run() {
            const before = ours()
            const start = performance.now()
            let left = n
            await Promise.all(
              Array.from({ length: c }, async () => {
                while (left-- > 0) await once()
              }),
            )
            const seconds = (performance.now() - start) / 1000
            const after = ours()
            // What the processes use while nothing signs in (timers, the credential feed, Postgres's own work), to
            // subtract: serial sign-ins take long enough for it to count. Read after the run, not before: right after
            // the warm-up the JIT is still compiling, and that is the sign-ins' cost, not idle.
            await settle(api.pid)
            const idleFrom = ours()
            const idleStart = performance.now()
            await Bun.sleep(5000)
            const idleTo = ours()
            const idleSeconds = (performance.now() - idleStart) / 1000
            const rows = [...after]
              .map(([label, t]) => {
                const idle = ((idleTo.get(label) ?? 0) - (idleFrom.get(label) ?? 0)) / idleSeconds
                return { label, us: (((t - (before.get(label) ?? 0) - idle * seconds) / TICKS_PER_SECOND) * 1e6) / n, idle: idle * 10 }
              })
              .filter((r) => r.us !== 0)
              .sort((a, b) => b.us - a.us)
            for (const r of rows)
              console.log(`    ${r.label.padEnd(48)} ${r.us.toFixed(0).padStart(7)} µs/sign-in (idle ${r.idle.toFixed(0)} ms/s, subtracted)`)
            // The sign-in's servers (the API, its hashing child, Postgres) against the argon2id in them (the pool
            // threads): on a machine that only signs in, the share of bare argon2id the rate could reach at most.
            const servers = rows.filter((r) => !r.label.startsWith('  ') && !r.label.includes('sign-in-cpu.ts') && !r.label.includes('ceiling.ts'))
            const total = servers.reduce((a, r) => a + r.us, 0)
            const argon2 = rows.filter((r) => r.label.includes('thread Bun Pool')).reduce((a, r) => a + r.us, 0)
            console.log(
              `    argon2id ${argon2.toFixed(0)} µs, everything else ${(total - argon2).toFixed(0)} µs a sign-in: at most ${((100 * argon2) / total).toFixed(1)}% of bare argon2id`,
            )
            // Bare argon2id's own CPU a verification (bench/argon2-baseline.ts, its own process, the same concurrency).
            const bare = Bun.spawn([process.execPath, join(import.meta.dir, 'argon2-baseline.ts'), '10', String(c)], { stdout: 'pipe', env: baselineEnv() })
            const { verifies } = JSON.parse((await new Response(bare.stdout).text()).trim().split('\n').at(-1)!) as { verifies: number }
            await bare.exited
            console.log(`    bare argon2id: ${(Number(bare.resourceUsage()!.cpuTime.total) / verifies).toFixed(0)} µs of CPU a verification`)
            // The read statement alone, on a connection of its own: its backend's CPU a statement.
            const sql = postgres(api.databaseUrl, { max: 1, onnotice: () => {} })
            const [{ pid }] = (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`) as unknown as [{ pid: number }]
            const backend = () => {
              const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
              const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
              return Number(f[11]) + Number(f[12])
            }
            const email = (signIn.body as { email: string }).email
            for (let i = 0; i < 100; i++) await findSignInAccount(sql as unknown as Sql, { email })
            const t0 = backend()
            for (let i = 0; i < n * 4; i++) await findSignInAccount(sql as unknown as Sql, { email })
            const per = (ticks: number, count: number) => `${(((ticks / TICKS_PER_SECOND) * 1e6) / count).toFixed(0).padStart(7)} µs of Postgres`
            console.log(`    the read statement alone (findSignInAccount)     ${per(backend() - t0, n * 4)}`)
            // The write alone (the session, its audit entry, the known client), then sealing those entries.
            const who = (await findSigner(sql as unknown as Sql, { config: {} as never }, { email }))!
            const ctx = {
              principal: null,
              membership: null,
              ip: '127.0.0.1',
              userAgent: `Bun/${Bun.version}`,
              requestId: null,
              traceId: null,
              system: null,
            } as const
            const deps = { sql: sql as unknown as Sql, config: { SESSION_ABSOLUTE_HOURS: 12, SESSION_IDLE_MINUTES: 60 } as never, keys: {} as never }
            const open = () => openAuditedSession(deps.sql, deps, ctx, who.user.id, null, { method: 'password', known: { factors: null, policy: null } })
            await open()
            await sealAuditBatch(sql as unknown as Sql, 10_000)
            const t1 = backend()
            for (let i = 0; i < n; i++) await open()
            const t2 = backend()
            console.log(`    the write statement alone (insertSession)        ${per(t2 - t1, n)}`)
            while ((await sealAuditBatch(sql as unknown as Sql, 200)) > 0) {}
            console.log(`    sealing its audit entries (batches of 200)       ${per(backend() - t2, n)}`)
            await sql.end()
            return { rate: n / seconds }
          },
        },
      ],
    }
  },
)
