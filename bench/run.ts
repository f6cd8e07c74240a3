// The benchmark runner: `bun bench/run.ts [--quick] [--duration 10] [--warmup 2] [--connections 32] [--threads 1]
// [--only <name part>] [--generator wrk|autocannon] [--profile]` (or BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_THREADS,
// BENCH_GENERATOR). It starts Postgres, migrates it, starts the API as its own process, and drives every row of
// bench/rows.ts with wrk (autocannon when wrk is not installed: `apt-get install wrk`), each against GET /bench/hello
// measured in the same run, before and after the rows. It reports; it never fails on a missed target.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDb } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import { freePort, newSecretKey, onShutdownSignal, spawnChild, startPostgres, stopAll, waitUntil, type Child, type PostgresServer } from '../scripts/platform'
import { rows, type BenchContext, type Row } from './rows'

const ROOT = join(import.meta.dir, '..')
const RESULTS = join(import.meta.dir, 'results')

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' }, warmup: { type: 'string' }, connections: { type: 'string' }, threads: { type: 'string' },
    only: { type: 'string' }, generator: { type: 'string' },
    // The API writes a CPU profile (markdown) to bench/results/ when it stops.
    profile: { type: 'boolean', default: false },
  },
})
const num = (flag: string | undefined, env: string, def: number) => Number(flag ?? process.env[env] ?? def)
const opts = {
  duration: num(flags.duration, 'BENCH_DURATION', flags.quick ? 3 : 10),
  warmup: num(flags.warmup, 'BENCH_WARMUP', flags.quick ? 1 : 2),
  connections: num(flags.connections, 'BENCH_CONNECTIONS', 32),
  threads: num(flags.threads, 'BENCH_THREADS', 1),
}

// ---- what we start, and its teardown (normal end, error, Ctrl-C). Children run in their own process groups, so
// a terminal's Ctrl-C reaches only us and we stop them in order. ----

const scratch = mkdtempSync(join(tmpdir(), 'rcp-bench-'))
chmodSync(scratch, 0o755) // Postgres runs as the postgres user and keeps its data dir in here
const loads = new Set<Child>()
let pg: PostgresServer | undefined
let api: Child | undefined
let tornDown: Promise<void> | undefined

function teardown(): Promise<void> {
  return (tornDown ??= (async () => {
    await stopAll([...loads, api])
    await pg?.stop()
    rmSync(scratch, { recursive: true, force: true })
  })())
}
onShutdownSignal(async (signal) => {
  console.error(`\n${signal}: tearing down`)
  await teardown()
  return 130
})

// ---- Postgres and the API ----

async function startApi(databaseUrl: string, logFile: string): Promise<string> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  api = spawnChild('api', {
    cmd: [process.execPath, ...(flags.profile ? ['--cpu-prof-md', `--cpu-prof-dir=${RESULTS}`] : []), 'api/main.ts'], cwd: ROOT, logFile,
    env: {
      ...process.env, DATABASE_URL: databaseUrl, SECRET_KEY: newSecretKey(), HOST: '127.0.0.1', PORT: String(port),
      LOG_LEVEL: 'warn', BENCH_HELLO: 'true',
      RATE_LIMIT_PRINCIPAL_PER_MINUTE: '100000000', RATE_LIMIT_TENANT_PER_MINUTE: '100000000', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
    },
  })
  await waitUntil(api, 'GET /healthz', async () => (await fetch(`${url}/healthz`)).ok, 30_000)
  return url
}

// ---- load generators: both return the same measurement ----

interface Target { url: string; method: string; headers: Record<string, string>; body?: string; connections: number }
interface Measured { rps: number; p50Ms: number; p99Ms: number; requests: number; non2xx: number; errors: number }

// Every byte as a decimal escape: a Lua string literal for any header or body, no quoting rules to get wrong.
const lua = (s: string) => `"${[...Buffer.from(s)].map((b) => `\\${b}`).join('')}"`

async function wrk(t: Target, seconds: number): Promise<Measured> {
  const script = join(scratch, 'row.lua')
  await Bun.write(script, [
    `wrk.method = ${lua(t.method)}`,
    ...(t.body === undefined ? [] : [`wrk.body = ${lua(t.body)}`]),
    ...Object.entries(t.headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`),
    'done = function(s, latency)',
    '  local e = s.errors',
    '  io.write(string.format("\\nRESULT %d %d %.1f %.1f %d %d\\n", s.requests, s.duration,',
    '    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))',
    'end',
  ].join('\n'))
  const proc = spawnChild('wrk', { cmd: ['wrk', `-t${Math.min(opts.threads, t.connections)}`, `-c${t.connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', script, t.url], pipe: true })
  loads.add(proc)
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  loads.delete(proc)
  const line = out.split('\n').find((l) => l.startsWith('RESULT '))
  if (!line) throw new Error(`wrk printed no result:\n${out}${err}`)
  const [requests, durationUs, p50Us, p99Us, non2xx, errors] = line.split(' ').slice(1).map(Number) as number[]
  return { rps: requests! / (durationUs! / 1e6), p50Ms: p50Us! / 1000, p99Ms: p99Us! / 1000, requests: requests!, non2xx: non2xx!, errors: errors! }
}

async function autocannon(t: Target, seconds: number): Promise<Measured> {
  const run = (await import('autocannon' as string)).default
  const r = await run({ ...t, duration: seconds })
  return { rps: r.requests.total / r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts }
}

const useWrk = (flags.generator ?? process.env.BENCH_GENERATOR ?? (Bun.which('wrk') ? 'wrk' : 'autocannon')) === 'wrk'
const generator = useWrk
  ? { name: spawnText(['wrk', '-v']).match(/wrk \S+/)?.[0] ?? 'wrk', drive: wrk }
  : { name: `autocannon ${(await import('autocannon/package.json')).version} (in the runner's process)`, drive: autocannon }

function spawnText(cmd: string[]): string {
  const r = Bun.spawnSync(cmd, { cwd: ROOT })
  return `${r.stdout.toString()}${r.stderr.toString()}`.trim()
}

// ---- one row: setup, status check, warm-up, measured run ----

async function call(base: string, method: string, path: string, o: { body?: unknown; headers?: Record<string, string> } = {}) {
  const headers = { ...(o.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers }
  const res = await fetch(`${base}${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) })
  const text = await res.text()
  let json: any
  try { json = text ? JSON.parse(text) : undefined } catch { json = text }
  return { status: res.status, headers: res.headers, json }
}

async function measure(base: string, ctx: BenchContext, row: Row): Promise<Measured> {
  if (tornDown) throw new Error('interrupted')
  const headers = { ...row.headers, ...(await row.setup?.(ctx)) }
  const body = row.body === undefined ? undefined : JSON.stringify(row.body)
  if (body !== undefined) headers['content-type'] ??= 'application/json'
  const target = { url: `${base}${row.path}`, method: row.method, headers, body, connections: row.connections ?? opts.connections }
  const probe = await fetch(target.url, target)
  await probe.arrayBuffer()
  if (probe.status !== (row.expect ?? 200)) throw new Error(`expected ${row.expect ?? 200}, got ${probe.status}`)
  if (opts.warmup > 0) await generator.drive(target, opts.warmup)
  return generator.drive(target, opts.duration)
}

// ---- the run ----

interface Result extends Partial<Measured> { name: string; method: string; path: string; ratio?: number; ratioElysia?: number; target?: number; latency?: string; pass?: boolean; error?: string }

const latencyTarget = (row: Row) =>
  [row.maxP50Ms === undefined ? '' : `p50 ≤ ${row.maxP50Ms} ms`, row.maxP99Ms === undefined ? '' : `p99 ≤ ${row.maxP99Ms} ms`].filter(Boolean).join(', ') || undefined

async function main() {
  mkdirSync(RESULTS, { recursive: true })
  for (const log of ['api.log', 'postgres.log']) rmSync(join(RESULTS, log), { force: true }) // spawnChild appends
  const selected = rows.filter((r) => !flags.only || r.name.includes(flags.only))
  const cores = cpus().length
  console.log(`load generator: ${generator.name}; ${opts.connections} connections${useWrk ? `, ${opts.threads} thread(s)` : ''}, ` +
    `${opts.warmup} s warm-up + ${opts.duration} s per row`)
  console.log(`note: the API and the load generator share this machine's ${cores} cores (nothing pinned); ` +
    'read the ratios, not the absolute numbers')

  // ephemeral: fsync off. On a DATABASE_URL from the environment it uses (and then drops) its own database instead.
  pg = await startPostgres({ dataDir: join(scratch, 'pg'), port: await freePort(), database: 'rcp_bench', logFile: join(RESULTS, 'postgres.log'), ephemeral: true })
  const sql = createDb(pg.url, { max: 1 })
  await migrate(sql)
  await sql.end()
  const logFile = join(RESULTS, 'api.log')
  const base = await startApi(pg.url, logFile)
  const ctx: BenchContext = { url: base, databaseUrl: pg.url, call: (m, p, o) => call(base, m, p, o) }
  console.log(`API at ${base} (log: ${logFile})\n`)

  // Two baselines, each measured before and after the rows: Bun answering natively (no framework at all), and
  // an Elysia route on the same app that pays only the global hooks. Targets are judged against the second.
  const hello: Row = { name: 'GET /bench/hello', method: 'GET', path: '/bench/hello' }
  const elysiaHello: Row = { name: 'GET /bench/hello-elysia', method: 'GET', path: '/bench/hello-elysia' }
  const helloBefore = await measure(base, ctx, hello)
  const elysiaBefore = await measure(base, ctx, elysiaHello)
  const measured: { row: Row; m?: Measured; error?: string }[] = []
  for (const row of selected) {
    if (tornDown) break
    process.stdout.write(`  ${row.name} ...`)
    try {
      measured.push({ row, m: await measure(base, ctx, row) })
      process.stdout.write(' done\n')
    } catch (err) {
      if (tornDown) break
      measured.push({ row, error: (err as Error).message })
      process.stdout.write(` failed: ${(err as Error).message}\n`)
    }
  }
  const elysiaAfter = await measure(base, ctx, elysiaHello)
  const helloAfter = await measure(base, ctx, hello)
  const helloRps = (helloBefore.rps + helloAfter.rps) / 2
  const elysiaRps = (elysiaBefore.rps + elysiaAfter.rps) / 2

  const baseline = (row: Row, label: string, m: Measured): Result =>
    ({ ...m, name: `${row.name} (${label})`, method: 'GET', path: row.path, ratio: m.rps / helloRps, ratioElysia: m.rps / elysiaRps })
  const results: Result[] = [
    baseline(hello, 'before', helloBefore),
    baseline(elysiaHello, 'before', elysiaBefore),
    ...measured.map(({ row, m, error }): Result => {
      const base = { name: row.name, method: row.method, path: row.path, target: row.target }
      if (!m) return { ...base, error }
      const ratioElysia = m.rps / elysiaRps
      const judged = row.target !== undefined || row.maxP50Ms !== undefined || row.maxP99Ms !== undefined
      const pass = ratioElysia >= (row.target ?? 0) && m.p50Ms <= (row.maxP50Ms ?? Infinity) && m.p99Ms <= (row.maxP99Ms ?? Infinity)
      return { ...base, ...m, ratio: m.rps / helloRps, ratioElysia, pass: judged ? pass : undefined, latency: latencyTarget(row) }
    }),
    baseline(elysiaHello, 'after', elysiaAfter),
    baseline(hello, 'after', helloAfter),
  ]
  printTable(results, helloRps, elysiaRps)
  const drift = Math.abs(helloBefore.rps - helloAfter.rps) / helloRps
  if (drift > 0.1) console.log(`warning: hello moved ${(drift * 100).toFixed(0)}% between before and after: the machine was busy; rerun`)

  const report = {
    at: new Date().toISOString(), generator: generator.name, cores, cpu: cpus()[0]?.model, bun: Bun.version,
    commit: spawnText(['git', 'rev-parse', '--short', 'HEAD']).match(/^[0-9a-f]{7,}$/)?.[0] ?? null,
    settings: opts, hello: { before: helloBefore.rps, after: helloAfter.rps, meanRps: helloRps },
    elysiaHello: { before: elysiaBefore.rps, after: elysiaAfter.rps, meanRps: elysiaRps }, rows: results,
  }
  await Bun.write(join(RESULTS, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`)
  console.log(`\nresults: ${join(RESULTS, 'latest.json')}`)
}

function printTable(results: Result[], helloRps: number, elysiaRps: number) {
  const fmt = (n: number | undefined, digits = 1) => (n === undefined ? '' : n.toFixed(digits))
  const pct = (n: number | undefined) => (n === undefined ? '' : `${(n * 100).toFixed(1)}%`)
  const lines = [['route', 'requests/s', 'p50 ms', 'p99 ms', 'ratio to hello', 'ratio to elysia hello', 'target'], ...results.map((r) => [
    r.name, fmt(r.rps, 0), fmt(r.p50Ms, 2), fmt(r.p99Ms, 2), pct(r.ratio), pct(r.ratioElysia),
    r.error ? `ERROR: ${r.error}` : r.pass === undefined ? ''
      : `${r.pass ? 'PASS' : 'MISS'} (${[r.target === undefined ? '' : `≥ ${(r.target * 100).toFixed(0)}%`, r.latency ?? ''].filter(Boolean).join(', ')})`,
  ])]
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)))
  const show = (l: string[]) => l.map((c, i) => (i === 0 || i === 6 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ').trimEnd()
  console.log(`\n${show(lines[0]!)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}`)
  for (const l of lines.slice(1)) console.log(show(l))
  console.log(`\nratios are against each baseline's mean of before and after: hello (Bun native) ${helloRps.toFixed(0)}, ` +
    `elysia hello ${elysiaRps.toFixed(0)} requests/s; targets are judged against the elysia hello`)
  for (const r of results) {
    if (r.non2xx || r.errors) console.log(`warning: ${r.name}: ${r.non2xx} non-2xx/3xx responses, ${r.errors} socket errors/timeouts`)
  }
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
