/**
 * ./scripts/test [bun test args]: fresh real servers on free ports and a throw-away data dir, the worker,
 * then `bun test` against them. Ends with exactly one line, `tests: N passed, N failed`, and a non-zero
 * exit when anything failed, bun test failed, or no test ran.
 * `./scripts/test --fast [files]`: the fast tier alone (test/unit: pure logic, and workflow logic on Temporal's
 * time-skipping test server, which each file starts itself), with none of the servers started.
 */
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDb } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import {
  CACHE_DIR,
  LOOPBACK_CIDRS,
  REPO_ROOT,
  claimPidFile,
  killChildrenOnExit,
  freePort,
  newSecretKey,
  onShutdownSignal,
  seconds,
  spawnChild,
  startMailCatcher,
  startMinio,
  reapStale,
  releasePidFile,
  startPostgres,
  startTemporal,
  startTogether,
  stopAll,
  tail,
  workerStarted,
  type Child,
  type Stoppable,
} from './platform'
import { failedTests, junitFailures, junitSkipped, skippedLine, sumTotals, type FailedTest, type SkippedTest } from './test-totals'

const started = performance.now()
const fast = process.argv.includes('--fast')
const FAST_TIER = 'test/unit'
killChildrenOnExit()
const say = (msg: string) => console.error(`[test] ${msg}`)

/** Servers and data of earlier runs that were killed outright (SIGKILL, OOM, a cancelled CI job). */
async function sweepAbandonedRuns() {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('rcp-test-')) continue
    const dir = join(tmpdir(), name)
    try {
      const reaped = await reapStale(join(dir, 'run', 'pids.json'), 'scripts/test.ts')
      if (!existsSync(join(dir, 'run', 'pids.json'))) continue // still starting, or kept on purpose
      if (reaped.length > 0) say(`killed leftovers of an abandoned run: ${reaped.join(', ')}`)
      rmSync(dir, { recursive: true, force: true })
    } catch {
      /* its run is still going */
    }
  }
}
await sweepAbandonedRuns()

const dataDir = mkdtempSync(join(tmpdir(), 'rcp-test-'))
chmodSync(dataDir, 0o711) // Postgres runs as its own user and must be able to enter its subdirectory
const logs = join(dataDir, 'logs')
const keepData = process.env.RCP_KEEP_TEST_DATA === '1'
await claimPidFile(join(dataDir, 'run', 'pids.json'), 'scripts/test.ts')

const servers: Stoppable[] = []
let worker: Child | undefined
let bunTest: Child | undefined
/** The bun test process of the files run alongside the main one (ALONGSIDE below), in a full run. */
let alongside: Child | undefined
const output = { stdout: '', stderr: '' }

let tearingDown: Promise<void> | undefined
const teardown = () => (tearingDown ??= stopEverything())

async function stopEverything() {
  const t = performance.now()
  const steps: string[] = []
  const step = async (name: string, p: Promise<unknown> | (() => void)) => {
    const s = performance.now()
    await (typeof p === 'function' ? p() : p)
    steps.push(`${name} ${seconds(s)}`)
  }
  await step('bun test', stopAll([bunTest, alongside]))
  await step('worker', stopAll([worker])) // before the servers, so it does not log a storm of connection errors
  await step('servers', stopAll(servers))
  releasePidFile()
  if (keepData) say(`kept ${dataDir}`)
  else await step('data', () => rmSync(dataDir, { recursive: true, force: true }))
  say(`teardown ${seconds(t)} (${steps.join(', ')})`)
}

/** The output of the files run alongside, read once that process ended (its log is in the run's data directory). */
let alongsideOutput = ''

/** bun test's own totals (scripts/test-totals.ts), never a count of ours: the main process's, plus those of the process
 *  that ran the files alongside it. */
const totals = () => sumTotals(`${output.stdout}\n${output.stderr}`, ...(alongsideOutput ? [alongsideOutput] : []))

/** The skipped tests bun's report names, read before the teardown takes the report away. */
let skippedTests: SkippedTest[] = []
let finished = false
function finish(code: number): number {
  const { passed, failed, skipped } = totals()
  // A Ctrl-C lands while main() is also finishing; the summary is printed once, last.
  if (!finished) {
    console.log(skippedLine(skipped, skippedTests))
    console.log(`tests: ${passed} passed, ${failed} failed`)
  }
  finished = true
  return code
}

let interrupted = false
onShutdownSignal(async (signal) => {
  interrupted = true
  say(`${signal}: stopping`)
  await teardown()
  return finish(130)
})

async function timed<T>(name: string, p: Promise<T>): Promise<T> {
  const t = performance.now()
  const value = await p
  say(`${name} ready in ${seconds(t)}`)
  return value
}

/** The scrape listeners of the processes this run starts (docs/operations.md "Metrics"), on free ports like the servers. Files run
 *  side by side, so an API a test file starts as a process (api/main.ts) names a METRICS_PORT of its own: two of them
 *  on this one would race for it. */
let scrapePorts: Record<string, string> = {}

async function startServers() {
  const ports: number[] = []
  for (let i = 0; i < 10; i++) ports.push(await freePort())
  const [pgPort, temporalPort, uiPort, httpPort, metricsPort, minioPort, consolePort, apiMetrics, workerMetrics, sdkMetrics] = ports as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  scrapePorts = { METRICS_PORT: String(apiMetrics), WORKER_METRICS_PORT: String(workerMetrics), TEMPORAL_METRICS_PORT: String(sdkMetrics) }
  return startTogether(
    {
      pg: timed(
        'postgres',
        startPostgres({
          dataDir: join(dataDir, 'postgres'),
          port: pgPort,
          database: `rcp_test_${process.pid}_${Date.now().toString(36)}`,
          logFile: join(logs, 'postgres.log'),
          ephemeral: true,
        }),
      ),
      temporal: timed(
        'temporal',
        startTemporal({
          // In memory unless the run's data is kept: a database file cost the dev server a third more CPU (docs/testing.md).
          dbFile: keepData ? join(dataDir, 'temporal', 'temporal.db') : undefined,
          port: temporalPort,
          uiPort,
          httpPort,
          metricsPort,
          logFile: join(logs, 'temporal.log'),
          ephemeral: true,
        }),
      ),
      minio: timed('minio', startMinio({ dataDir: join(dataDir, 'minio'), port: minioPort, consolePort, logFile: join(logs, 'minio.log') })),
      mail: timed('mail catcher', startMailCatcher()),
    },
    servers,
  )
}

/** bun test (1.4) ignores bunfig.toml's [test] timeout, so the runner passes it as the flag. */
function timeoutArgs(args: string[]): string[] {
  if (args.some((a) => a.startsWith('--timeout'))) return []
  try {
    const bunfig = Bun.TOML.parse(readFileSync(join(REPO_ROOT, 'bunfig.toml'), 'utf8')) as { test?: { timeout?: number } }
    return bunfig.test?.timeout ? ['--timeout', String(bunfig.test.timeout)] : []
  } catch {
    return []
  }
}

/** Test files run in parallel: bun test's worker processes take them one at a time, each worker running its files one
 *  after another in one global, as the whole suite once ran in one process (`--no-isolate`: a worker pays the module
 *  loading and the workflow bundling of worker/run.ts once, not once per file). Most of a file's time is spent waiting
 *  on the servers, Temporal timers and child processes, not on the CPU, so there are more workers than cores.
 *  `--parallel=N` or `--isolate` on the command line override these. */
const PARALLEL = Math.max(4, 2 * availableParallelism())

function parallelArgs(args: string[]): string[] {
  return [
    ...(args.some((a) => a.startsWith('--parallel')) ? [] : [`--parallel=${PARALLEL}`]),
    ...(args.some((a) => a === '--isolate' || a === '--no-isolate') ? [] : ['--no-isolate']),
  ]
}

/** Each file's duration from earlier runs, so bun starts the slowest files first (the fuzzer's 2 minutes must not be
 *  the last file to start). Kept in the cache, not the repository: it is this machine's measurement. The run reads and
 *  updates a copy, and the cache takes the copy back whole, so runs side by side never read a half-written file. */
const TIMINGS = join(CACHE_DIR, 'test-timings.json')
const runTimings = join(dataDir, 'test-timings.json')
const junitReport = join(dataDir, 'junit.xml')

function timingsArgs(args: string[]): string[] {
  if (args.some((a) => a.startsWith('--timings'))) return []
  try {
    JSON.parse(readFileSync(TIMINGS, 'utf8')) // bun refuses to start on a file that is not JSON
    copyFileSync(TIMINGS, runTimings)
  } catch {
    /* none yet, or unreadable: this run writes the first */
  }
  return [`--timings=${runTimings}`, '--update-timings']
}

/** bun's JUnit report beside its console output: the failed tests with their messages, for the closing lines. */
function reportArgs(args: string[], outfile = junitReport): string[] {
  return args.some((a) => a.startsWith('--reporter')) ? [] : ['--reporter=junit', `--reporter-outfile=${outfile}`]
}

/** Files a full run gives a bun test process of their own, started beside the main one against the same servers: the
 *  schema fuzzer's two passes run for a set time (--max-time) on Python processes and an API of their own, so in the
 *  pool it held one worker for its whole length, and the files queued behind it waited. Its output and verdict are
 *  read when the main process has ended, and its tests count in the totals like any other. A run that names files
 *  runs them as named, in one process. */
const ALONGSIDE = ['test/contract/schemathesis.test.ts']
const alongsideReport = join(dataDir, 'junit-alongside.xml')

/** The report's failures and skips, or none when bun wrote no report (killed) or a torn one. */
function readReport(file: string): { failures: FailedTest[]; skipped: SkippedTest[] } {
  try {
    const xml = readFileSync(file, 'utf8')
    return { failures: junitFailures(xml), skipped: junitSkipped(xml) }
  } catch {
    return { failures: [], skipped: [] }
  }
}

function keepTimings(): void {
  try {
    JSON.parse(readFileSync(runTimings, 'utf8'))
    const next = `${TIMINGS}.${process.pid}`
    copyFileSync(runTimings, next)
    renameSync(next, TIMINGS)
  } catch {
    /* bun wrote none (no file ran) */
  }
}

/** The servers, the schema and the worker; their addresses as the environment of bun test. Undefined when something
 *  did not start (said, and torn down). */
async function serverEnv(): Promise<Record<string, string | undefined> | undefined> {
  let s: Awaited<ReturnType<typeof startServers>>
  try {
    s = await startServers()
    const sql = createDb(s.pg.url, { max: 1 })
    try {
      await migrate(sql)
    } finally {
      await sql.end({ timeout: 5 })
    }
  } catch (err) {
    say(`could not start the test servers:\n${err instanceof Error ? err.message : String(err)}`)
    await teardown()
    return undefined
  }

  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: s.pg.url,
    TEMPORAL_ADDRESS: s.temporal.address,
    TEMPORAL_NAMESPACE: s.temporal.namespace,
    TEMPORAL_TASK_QUEUE_PREFIX: 'rcp-test',
    TEMPORAL_UI_URL: s.temporal.uiUrl,
    S3_ENDPOINT: s.minio.endpoint,
    S3_ACCESS_KEY: s.minio.accessKey,
    S3_SECRET_KEY: s.minio.secretKey,
    SMTP_URL: s.mail.smtpUrl,
    MAIL_CATCHER_URL: s.mail.httpUrl,
    SECRET_KEY: newSecretKey(),
    // Every account of the run is made and thrown away: argon2id at 1 MiB and one pass instead of OWASP's 19 MiB and
    // two (docs/testing.md "What the suite costs"); test/accounts/password-hasher.test.ts holds the default to OWASP's.
    PASSWORD_HASH_MEMORY_KIB: '1024',
    PASSWORD_HASH_ITERATIONS: '1',
    // The SSO tests run their OpenID Provider on loopback; test/tenancy/sso-outbound.test.ts turns this off.
    OUTBOUND_ALLOW_PRIVATE_CIDRS: LOOPBACK_CIDRS,
    // The webhook tests run their own workers (a test-made CA, compressed retries); this one must not take their events.
    WEBHOOK_DISPATCHER: 'false',
    RCP_CACHE_DIR: CACHE_DIR,
    // Every worker process of the run (the runner's, the crash tests', the drills') bundles its workflows once per change.
    WORKFLOW_BUNDLE_CACHE_DIR: join(CACHE_DIR, 'workflow-bundles'),
    RCP_TEST_DATA_DIR: dataDir,
    ...scrapePorts,
  }
  if (existsSync(join(REPO_ROOT, 'worker', 'main.ts'))) {
    // Its state is thrown away with the servers': at the end it is killed, not drained, so the command's last seconds
    // never wait on a graceful stop (up to its grace time and the stop timeout), unless the data is kept.
    worker = spawnChild('worker', {
      cmd: [process.execPath, 'worker/main.ts'],
      env,
      logFile: join(logs, 'worker.log'),
      stopSignal: keepData ? 'SIGTERM' : 'SIGKILL',
    })
    // Files start side by side from the first second, and their first flows need the worker's queues polled: wait
    // for its start line (bundling the workflows takes it seconds, much longer on a loaded machine).
    if (['debug', 'info', undefined].includes(env.LOG_LEVEL)) {
      const w = worker
      try {
        await timed('worker', workerStarted(w))
      } catch (err) {
        say(`the worker did not start:\n${err instanceof Error ? err.message : String(err)}`)
        await teardown()
        return undefined
      }
    }
  }
  say(`servers ready in ${seconds(started)} (data ${dataDir})`)
  return env
}

/** The fast tier's environment: no server, so the preload (test/support/preload.ts) lets its files run without one. */
const fastEnv = (): Record<string, string | undefined> => ({
  ...process.env,
  NODE_ENV: 'test',
  RCP_TEST_TIER: 'fast',
  RCP_CACHE_DIR: CACHE_DIR,
  RCP_TEST_DATA_DIR: dataDir,
})

async function main(): Promise<number> {
  const env = fast ? fastEnv() : await serverEnv()
  if (!env) return finish(1)

  const given = process.argv.slice(2).filter((a) => a !== '--fast')
  const namesFiles = given.some((a) => !a.startsWith('-'))
  // The fast tier is its folder unless files of it are named.
  const args = fast && !namesFiles ? [...given, FAST_TIER] : given
  // A filter of tests or files (a name pattern, a shard, --only, --changed) might leave the process alongside nothing to
  // run, which bun test counts as a failure: such a run stays in one process.
  const filtered = given.some((a) => /^(-t|--test-name-pattern|--only|--changed|--shard)/.test(a))
  const split = !fast && !namesFiles && !filtered && ALONGSIDE.every((f) => existsSync(join(REPO_ROOT, f)))
  const color = process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}
  if (split) {
    alongside = spawnChild('bun test (alongside)', {
      cmd: [process.execPath, 'test', ...timeoutArgs(args), ...reportArgs(args, alongsideReport), ...args, ...ALONGSIDE],
      env: { ...env, ...color },
      logFile: join(logs, 'bun-test-alongside.log'),
    })
  }
  const ignored = split ? ALONGSIDE.map((f) => `--path-ignore-patterns=${f}`) : []
  bunTest = spawnChild('bun test', {
    cmd: [process.execPath, 'test', ...timeoutArgs(args), ...parallelArgs(args), ...timingsArgs(args), ...reportArgs(args), ...ignored, ...args],
    env: { ...env, ...color },
    pipe: true,
  })
  const pump = async (from: ReadableStream<Uint8Array> | undefined, to: NodeJS.WriteStream, key: 'stdout' | 'stderr') => {
    if (!from) return
    const decoder = new TextDecoder()
    const reader = from.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      to.write(r.value)
      output[key] = (output[key] + decoder.decode(r.value, { stream: true })).slice(-65_536)
    }
  }
  await Promise.all([pump(bunTest.stdout, process.stdout, 'stdout'), pump(bunTest.stderr, process.stderr, 'stderr')])
  let code = await bunTest.exited
  if (alongside) {
    if (alongside.running()) say(`waiting for ${ALONGSIDE.join(', ')} (run alongside)`)
    const sideCode = await alongside.exited
    if (interrupted) return new Promise<number>(() => {})
    alongsideOutput = readFileSync(alongside.logFile, 'utf8')
    process.stdout.write(`\n${ALONGSIDE.join(', ')} (run alongside the others):\n${alongsideOutput}`)
    if (code === 0 && sideCode !== 0) code = sideCode
  }
  if (interrupted) return new Promise<number>(() => {}) // the signal handler tears down and exits
  keepTimings()
  const { passed, failed, errors } = totals()
  const ok = code === 0 && failed === 0 && errors === 0 && passed + failed > 0

  if (!ok) {
    if (passed + failed === 0) say('no test ran')
    if (code !== 0 && failed === 0) say(`bun test exited with ${code ?? 'a signal'}`)
  }
  if (worker && (!ok || !worker.running())) {
    say(`worker log (${worker.running() ? 'running' : `exited with ${await worker.exited}`}):\n${tail(worker.logFile, 40)}`)
  }
  // The reports' failures with their messages; the output's names when bun wrote none or a torn one (killed) or left
  // one out (a hook).
  const reports = [readReport(junitReport), ...(alongside ? [readReport(alongsideReport)] : [])]
  const reported = reports.flatMap((r) => r.failures)
  skippedTests = reports.flatMap((r) => r.skipped)
  const failures = [
    ...reported,
    ...failedTests(`${output.stdout}\n${output.stderr}\n${alongsideOutput}`)
      .filter((name) => !reported.some((r) => r.name === name))
      .map((name) => ({ name, error: [] })),
  ]
  if (failures.length > 0) say(`failed:\n${failures.map((f) => [`    ${f.name}`, ...f.error.map((l) => `        ${l}`)].join('\n')).join('\n')}`)
  await teardown()
  say(`total ${seconds(started)}`)
  return finish(ok ? 0 : 1)
}

process.exit(await main())
