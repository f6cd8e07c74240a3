// The one harness of every benchmark (bench/run.ts, sign-in.ts, reconcile.ts, and whatever comes next). A benchmark
// is a plan: baselines and rows, each a function that measures one rate. The harness owns everything around it: flags,
// a scratch directory, the servers (Postgres, the API), the load generator, rounds that interleave baselines and rows
// so a busy neighbour hits both, the table of ratios, bench/results/<name>.json, and the teardown on any exit. Whenever
// a benchmark starts the API, the harness also serves a bare Elysia hello in its own process (bench/ceiling.ts) and
// measures it as the first baseline: the ceiling every HTTP row is read against. It reports; it never fails on a miss.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { createDb } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import {
  freePort,
  killChildrenOnExit,
  newSecretKey,
  onShutdownSignal,
  spawnChild,
  startPostgres,
  stopAll,
  waitUntil,
  weightApi,
  type Child,
  type PostgresServer,
  type Stoppable,
} from '../scripts/platform'
import { cpuSecondsOf, settle } from './cpu-use'
import { loadGenerator, type Generator, type Target } from './load'
import type { Measure, Sample } from './measure'
import { printTable, writeReport, type Result } from './report'

// Every benchmark names these with the harness: bench/measure.ts holds them only so that report.ts can too.
export type { Measure, Sample }

export const ROOT = join(import.meta.dir, '..')
export const RESULTS = join(import.meta.dir, 'results')

/** Below this rate a measurement's server CPU per request is not reported: the process's background work would be
 *  too much of it (an idle API used 30 ms of CPU a second on 2026-11-27, so 3 µs a request at this rate). */
export const CPU_MIN_RATE = 10_000

export interface Plan {
  baselines: Measure[]
  rows: Measure[]
  /** Each round measures every baseline, then every row; the baselines once more at the end. Default 1. */
  rounds?: number
  /** Each row with a `targetOf` is measured right beside that baseline, round after round (baseline first in one
   *  round, the row first in the next), and its ratio to it is the median of the rounds' pairs: on a machine whose
   *  neighbours come and go, a row and a baseline measured minutes apart read the neighbours as much as the code. */
  paired?: boolean
}

/** What a row's setup can use: the running API. `call` keeps no state; pass cookies and tokens yourself. */
export interface BenchContext {
  url: string
  /** The bench database, for setups that seed volume no API could create in reasonable time. */
  databaseUrl: string
  /** The API's process id (its resident set can be read from /proc/<pid>/status). */
  pid: number
  call(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }): Promise<Reply>
}
export interface Reply {
  status: number
  headers: Headers
  json: any
}

/** A request driven by the load generator (see bench/rows.ts). */
export interface HttpRow extends Omit<Measure, 'run' | 'setup'> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  headers?: Record<string, string>
  body?: unknown // sent as JSON on every request
  /** Runs once before the row is driven; the headers it returns are sent with every request. */
  setup?(ctx: BenchContext): Promise<Record<string, string>>
  /** The status every request must get (checked once before the run; wrk counts any non-2xx/3xx). Default 200. */
  expect?: number
  /** Concurrent connections for this row (default: --connections). */
  connections?: number
}

export interface Harness {
  flags: Record<string, string | boolean | undefined>
  settings: { duration: number; warmup: number; connections: number; threads: number; rounds: number }
  scratch: string
  generator: Generator
  /** A migrated, throw-away Postgres (fsync off); its log goes to bench/results/<name>-postgres.log (a second one's
   *  to <name>-postgres-2.log). */
  postgres(): Promise<PostgresServer>
  /** The API as its own process against `databaseUrl` (with the baselines of bench/baselines.ts), rate budgets out of
   *  the way, and the ceiling beside it. */
  api(databaseUrl: string, o?: { args?: string[]; entry?: string; env?: Record<string, string>; weightedAsUp?: boolean }): Promise<BenchContext>
  /** A row driven over HTTP against the API: setup, one probe for the status, warm-up, then the measured run. */
  http(ctx: BenchContext, row: HttpRow): Measure
  /** Stopped at teardown, after the API, in reverse order of adding. */
  own(server: Stoppable): void
}

const num = (flag: unknown, env: string, def: number) => Number(flag ?? process.env[env] ?? def)

async function call(base: string, method: string, path: string, o: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers = { ...(o.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers }
  const res = await fetch(`${base}${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) })
  const text = await res.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = text
  }
  return { status: res.status, headers: res.headers, json }
}

/** Runs one benchmark: `bun bench/<name>.ts [--quick] [--duration 10] [--warmup 2] [--connections 32] [--threads 1]
 *  [--rounds 1] [--generator wrk|autocannon]` plus its own `options` (or BENCH_DURATION, BENCH_WARMUP, …). */
export async function benchmark(name: string, options: ParseArgsConfig['options'], plan: (h: Harness) => Promise<Plan>): Promise<never> {
  const { values: flags } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      threads: { type: 'string' },
      rounds: { type: 'string' },
      generator: { type: 'string' },
      ...options,
    },
  })
  const settings = {
    duration: num(flags.duration, 'BENCH_DURATION', flags.quick ? 3 : 10),
    warmup: num(flags.warmup, 'BENCH_WARMUP', flags.quick ? 1 : 2),
    connections: num(flags.connections, 'BENCH_CONNECTIONS', 32),
    threads: num(flags.threads, 'BENCH_THREADS', 1),
    rounds: num(flags.rounds, 'BENCH_ROUNDS', 0),
  }
  killChildrenOnExit()
  mkdirSync(RESULTS, { recursive: true })
  const scratch = mkdtempSync(join(tmpdir(), `rcp-bench-${name}-`))
  chmodSync(scratch, 0o755) // Postgres runs as the postgres user and keeps its data dir in here
  const loads = new Set<Child>()
  const apps: Child[] = []
  const servers: Stoppable[] = []
  let tornDown: Promise<void> | undefined
  const teardown = () =>
    (tornDown ??= (async () => {
      await stopAll([...loads, ...apps])
      for (const s of servers.reverse()) await s.stop().catch(() => {})
      rmSync(scratch, { recursive: true, force: true })
    })())
  onShutdownSignal(async (signal) => {
    console.error(`\n${signal}: tearing down`)
    await teardown()
    return 130
  })

  const generator = await loadGenerator(flags.generator as string | undefined, { scratch, threads: settings.threads, running: loads })
  const logFile = (part: string) => {
    const file = join(RESULTS, `${name}-${part}.log`)
    rmSync(file, { force: true }) // spawnChild appends
    return file
  }
  const serve = async (part: string, cmd: string[], env: Record<string, string>, ready: string) => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const child = spawnChild(part, { cmd, cwd: ROOT, logFile: logFile(part), env: { ...process.env, ...env, PORT: String(port) } })
    apps.push(child)
    await waitUntil(child, `GET ${ready}`, async () => (await fetch(`${url}${ready}`)).ok, 30_000)
    return { url, pid: child.pid }
  }
  const drive = (t: Target, server?: number) => async (): Promise<Sample> => {
    if (tornDown) throw new Error('interrupted')
    // The warm-up's requests still in flight when it stops are finished by the server all the same: measured, they
    // would cost the run CPU that its own requests then lack.
    if (settings.warmup > 0) await generator.drive(t, settings.warmup)
    if (server !== undefined) await settle(server)
    const before = server === undefined ? undefined : cpuSecondsOf(server)
    const m = await generator.drive(t, settings.duration)
    const after = server === undefined ? undefined : cpuSecondsOf(server)
    const warning = m.non2xx || m.errors ? `${m.non2xx} non-2xx/3xx responses, ${m.errors} socket errors/timeouts` : undefined
    const cpuUsPerRequest = before !== undefined && after !== undefined && m.rps >= CPU_MIN_RATE ? ((after - before) * 1e6) / m.requests : undefined
    return { rate: m.rps, p50Ms: m.p50Ms, p99Ms: m.p99Ms, warning, cpuUsPerRequest }
  }
  let ceiling: Measure | undefined
  // A second Postgres or API (bench/audit.ts compares two builds side by side) gets its own data dir, database,
  // process name and log: postgres-2, api-2.
  const started = new Map<string, number>()
  const nth = (part: string) => {
    const n = (started.get(part) ?? 0) + 1
    started.set(part, n)
    return n === 1 ? part : `${part}-${n}`
  }

  const h: Harness = {
    flags,
    settings,
    scratch,
    generator,
    async postgres() {
      // On a DATABASE_URL from the environment it uses (and then drops) a database of its own instead.
      const part = nth('postgres')
      const database = `rcp_bench_${name}${part.slice('postgres'.length)}`.replace(/\W/g, '_')
      const pg = await startPostgres({ dataDir: join(scratch, part), port: await freePort(), database, logFile: logFile(part), ephemeral: true })
      servers.push(pg)
      const sql = createDb(pg.url, { max: 1 })
      try {
        await migrate(sql)
      } finally {
        await sql.end()
      }
      return pg
    },
    async api(databaseUrl, o = {}) {
      const part = nth('api')
      // The production process with the baselines mounted (bench/api-entry.ts).
      const { url, pid } = await serve(
        part,
        [process.execPath, ...(o.args ?? []), o.entry ?? 'bench/api-entry.ts'],
        {
          DATABASE_URL: databaseUrl,
          SECRET_KEY: newSecretKey(),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          METRICS_PORT: String(await freePort()),
          RATE_LIMIT_PRINCIPAL_PER_MINUTE: '100000000',
          RATE_LIMIT_TENANT_PER_MINUTE: '100000000',
          RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
          ...o.env,
        },
        '/healthz',
      )
      // Only where the plan runs the platform as ./scripts/up does (bench/mixed-load.ts); rows read against the
      // ceiling keep the same weight as it.
      if (o.weightedAsUp) console.log(`${weightApi(pid)}, as ./scripts/up would here`)
      if (!ceiling) {
        const { url: at, pid: ceilingPid } = await serve('ceiling', [process.execPath, 'bench/ceiling.ts'], {}, '/')
        ceiling = {
          name: 'bare Elysia hello, own process (ceiling)',
          run: drive({ url: `${at}/`, method: 'GET', headers: {}, connections: settings.connections }, ceilingPid),
        }
      }
      console.log(`API at ${url} (log: ${join(RESULTS, `${name}-${part}.log`)})`)
      return { url, databaseUrl, pid, call: (m, p, c) => call(url, m, p, c) }
    },
    http(ctx, row) {
      let target: Target | undefined
      return {
        ...row,
        async setup() {
          const headers = { ...row.headers, ...(await row.setup?.(ctx)) }
          const body = row.body === undefined ? undefined : JSON.stringify(row.body)
          if (body !== undefined) headers['content-type'] ??= 'application/json'
          target = { url: `${ctx.url}${row.path}`, method: row.method, headers, body, connections: row.connections ?? settings.connections }
          const probe = await fetch(target.url, target)
          await probe.arrayBuffer()
          if (probe.status !== (row.expect ?? 200)) throw new Error(`expected ${row.expect ?? 200}, got ${probe.status}`)
        },
        // The generator stops with requests in flight, and the server finishes them anyway: a sign-in's argon2id
        // would keep the cores busy well into the next measurement (the baseline paired with it). Waited out.
        async run() {
          const sample = await drive(target!, ctx.pid)()
          await settle(ctx.pid)
          return sample
        },
      }
    },
    own(server) {
      servers.push(server)
    },
  }

  try {
    const p = await plan(h)
    const baselines = [...(ceiling ? [ceiling] : []), ...p.baselines]
    const rounds = settings.rounds || p.rounds || 1
    console.log(
      `${name}: load generator ${generator.name}; ${settings.connections} connections, ${settings.warmup} s warm-up + ` +
        `${settings.duration} s a measurement, ${rounds} round(s); the servers and the generator share this machine's cores: ` +
        'read the ratios, not the absolute numbers\n',
    )
    const results = await measureAll(baselines, p.rows, rounds, () => Boolean(tornDown), p.paired ?? false)
    printTable(results)
    await writeReport(name, { generator: generator.name, settings: { ...settings, rounds } }, results)
  } catch (err) {
    if (!tornDown) console.error(`benchmark aborted: ${(err as Error).stack ?? err}`)
    process.exitCode = 1
  } finally {
    await teardown()
  }
  process.exit(process.exitCode ?? 0)
}

/** Rounds of baselines then rows, and the baselines once more, each in the order given; or, `paired`, each row beside
 *  its baseline (the others as before). A row that fails is reported with its error and left out of later rounds. */
async function measureAll(baselines: Measure[], rows: Measure[], rounds: number, stopped: () => boolean, paired: boolean): Promise<Result[]> {
  const entries = [...baselines.map((m) => ({ m, baseline: true })), ...rows.map((m) => ({ m, baseline: false }))].map((e) => ({
    ...e,
    samples: [] as Sample[],
    pairRatios: [] as number[],
    error: undefined as string | undefined,
    ready: false,
  }))
  const measure = async (e: (typeof entries)[number]) => {
    if (stopped() || e.error) return undefined
    process.stdout.write(`  ${e.m.name} ...`)
    try {
      if (!e.ready) await e.m.setup?.()
      e.ready = true
      const s = await e.m.run()
      e.samples.push(s)
      process.stdout.write(` ${s.rate.toFixed(1)}/s\n`)
      return s
    } catch (err) {
      if (stopped()) return undefined
      e.error = (err as Error).message
      process.stdout.write(` failed: ${e.error}\n`)
      return undefined
    }
  }
  const pairs = paired
    ? entries
        .filter((e) => !e.baseline && e.m.targetOf)
        .flatMap((row) => {
          const base = entries.find((b) => b.baseline && b.m.name === row.m.targetOf)
          return base ? [{ row, base }] : []
        })
    : []
  const inPairs = new Set(pairs.flatMap((p) => [p.row, p.base]))
  const alone = entries.filter((e) => !inPairs.has(e))
  for (let r = 0; r < rounds; r++) {
    for (const e of alone) await measure(e)
    for (const { row, base } of pairs) {
      const [first, second] = r % 2 === 0 ? [base, row] : [row, base]
      const a = await measure(first)
      const b = await measure(second)
      if (a && b) row.pairRatios.push((first === row ? a : b).rate / (first === row ? b : a).rate)
    }
  }
  for (const e of alone.filter((x) => x.baseline).reverse()) await measure(e)
  if (stopped()) throw new Error('interrupted')
  return entries.map((e) => ({ measure: e.m, baseline: e.baseline, samples: e.samples, pairRatios: e.pairRatios, error: e.error }))
}
