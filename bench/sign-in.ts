// Password sign-in throughput against bare argon2id on the same cores, in the same run:
// `bun bench/sign-in.ts [--duration 5] [--connections 32]` (seconds per round, 3 rounds). It starts Postgres and the API (as bench/run.ts does),
// registers one user, then measures bare argon2id verifications/s (bench/argon2-baseline.ts, its own process),
// POST /v1/sessions with wrk (autocannon without wrk), interleaved in rounds. Sign-in cannot beat argon2id: every
// request is one verification; the ratio says how much of the machine the rest of sign-in costs. Target ≥ 90%.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDb } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import { freePort, newSecretKey, onShutdownSignal, spawnChild, startPostgres, stopAll, waitUntil, type Child, type PostgresServer } from '../scripts/platform'

const ROOT = join(import.meta.dir, '..')
const RESULTS = join(import.meta.dir, 'results')
const TARGET = 0.9
const ROUNDS = 3
const { values: flags } = parseArgs({ options: { duration: { type: 'string' }, connections: { type: 'string' } } })
const duration = Number(flags.duration ?? process.env.BENCH_DURATION ?? 5)
const connections = Number(flags.connections ?? process.env.BENCH_CONNECTIONS ?? 32)

const scratch = mkdtempSync(join(tmpdir(), 'rcp-bench-signin-'))
chmodSync(scratch, 0o755)
let pg: PostgresServer | undefined
let api: Child | undefined
let tornDown: Promise<void> | undefined
const teardown = () => (tornDown ??= (async () => {
  await stopAll([api])
  await pg?.stop()
  rmSync(scratch, { recursive: true, force: true })
})())
onShutdownSignal(async () => { await teardown(); return 130 })

async function argon2(): Promise<number> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'argon2-baseline.ts'), String(duration), String(connections)], { cwd: ROOT, stdout: 'pipe' })
  const out = await new Response(proc.stdout).text()
  if ((await proc.exited) !== 0) throw new Error(`argon2 baseline failed: ${out}`)
  return (JSON.parse(out.trim().split('\n').at(-1)!) as { perSecond: number }).perSecond
}

const lua = (s: string) => `"${[...Buffer.from(s)].map((b) => `\\${b}`).join('')}"`

async function signIns(url: string, body: string, seconds = duration): Promise<{ rps: number; p50Ms: number; p99Ms: number; non2xx: number }> {
  if (Bun.which('wrk')) {
    const script = join(scratch, 'signin.lua')
    await Bun.write(script, [
      'wrk.method = "POST"', `wrk.body = ${lua(body)}`, 'wrk.headers["content-type"] = "application/json"',
      'done = function(s, latency)',
      '  io.write(string.format("\\nRESULT %d %d %.1f %.1f %d\\n", s.requests, s.duration, latency:percentile(50), latency:percentile(99), s.errors.status))',
      'end',
    ].join('\n'))
    const proc = Bun.spawn(['wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], { stdout: 'pipe' })
    const out = await new Response(proc.stdout).text()
    await proc.exited
    const line = out.split('\n').find((l) => l.startsWith('RESULT '))
    if (!line) throw new Error(`wrk printed no result:\n${out}`)
    const [requests, us, p50, p99, non2xx] = line.split(' ').slice(1).map(Number) as number[]
    return { rps: requests! / (us! / 1e6), p50Ms: p50! / 1000, p99Ms: p99! / 1000, non2xx: non2xx! }
  }
  const run = (await import('autocannon' as string)).default
  const r = await run({ url, method: 'POST', body, headers: { 'content-type': 'application/json' }, connections, duration: seconds })
  return { rps: r.requests.total / r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx }
}

async function main() {
  mkdirSync(RESULTS, { recursive: true })
  pg = await startPostgres({ dataDir: join(scratch, 'pg'), port: await freePort(), database: 'rcp_bench_signin', logFile: join(scratch, 'postgres.log'), ephemeral: true })
  const sql = createDb(pg.url, { max: 1 })
  await migrate(sql)
  await sql.end()
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  api = spawnChild('api', {
    cmd: [process.execPath, 'api/main.ts'], cwd: ROOT, logFile: join(RESULTS, 'sign-in-api.log'),
    env: {
      ...process.env, DATABASE_URL: pg.url, SECRET_KEY: newSecretKey(), HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn',
      RATE_LIMIT_PRINCIPAL_PER_MINUTE: '100000000', RATE_LIMIT_TENANT_PER_MINUTE: '100000000', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
    },
  })
  await waitUntil(api, 'GET /healthz', async () => (await fetch(`${base}/healthz`)).ok, 30_000)
  const credentials = { email: `bench-${Date.now().toString(36)}@example.test`, password: 'correct horse battery staple' }
  const reg = await fetch(`${base}/v1/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) })
  if (reg.status !== 201) throw new Error(`registration failed: ${reg.status} ${await reg.text()}`)
  const probe = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) })
  if (probe.status !== 201) throw new Error(`sign-in failed: ${probe.status} ${await probe.text()}`)

  console.log(`${cpus().length} cores shared by the API, Postgres and the load generator; ${connections} connections, ${duration} s each`)
  // Interleaved rounds (argon2, sign-in, argon2, …, argon2) so load from anything else on the machine hits both sides.
  await signIns(`${base}/v1/sessions`, JSON.stringify(credentials), 2) // warm-up: JIT, pool, page cache
  const argonRounds = [await argon2()]
  const signInRounds: Awaited<ReturnType<typeof signIns>>[] = []
  for (let i = 0; i < ROUNDS; i++) {
    signInRounds.push(await signIns(`${base}/v1/sessions`, JSON.stringify(credentials)))
    argonRounds.push(await argon2())
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  const argonRps = mean(argonRounds)
  const signIn = { rps: mean(signInRounds.map((r) => r.rps)), p50Ms: mean(signInRounds.map((r) => r.p50Ms)), p99Ms: Math.max(...signInRounds.map((r) => r.p99Ms)), non2xx: signInRounds.reduce((a, r) => a + r.non2xx, 0) }
  const ratio = signIn.rps / argonRps
  console.log(`argon2id verifications/s per round: ${argonRounds.map((r) => r.toFixed(1)).join(', ')} (mean ${argonRps.toFixed(1)})`)
  console.log(`POST /v1/sessions requests/s per round: ${signInRounds.map((r) => r.rps.toFixed(1)).join(', ')} (mean ${signIn.rps.toFixed(1)}), ` +
    `p50 ${signIn.p50Ms.toFixed(0)} ms, p99 ${signIn.p99Ms.toFixed(0)} ms` + (signIn.non2xx ? `, ${signIn.non2xx} non-2xx` : ''))
  console.log(`ratio ${(ratio * 100).toFixed(1)}% of bare argon2id: ${ratio >= TARGET ? 'PASS' : 'MISS'} (≥ ${TARGET * 100}%)`)
  const loadAvg = (await Bun.file('/proc/loadavg').text().catch(() => '')).split(' ')[0]
  if (loadAvg && Number(loadAvg) > cpus().length) console.log(`warning: load average ${loadAvg} on ${cpus().length} cores: the machine was busy; rerun`)
  await Bun.write(join(RESULTS, 'sign-in.json'), `${JSON.stringify({
    at: new Date().toISOString(), cores: cpus().length, cpu: cpus()[0]?.model, bun: Bun.version, duration, connections,
    argon2: { rounds: argonRounds, meanPerSecond: argonRps }, signIn, signInRounds, ratio, target: TARGET, pass: ratio >= TARGET,
  }, null, 2)}\n`)
}

try {
  await main()
} catch (err) {
  if (!tornDown) console.error(`benchmark aborted: ${(err as Error).stack ?? err}`)
  process.exitCode = 1
} finally {
  await teardown()
}
process.exit(process.exitCode ?? 0)
