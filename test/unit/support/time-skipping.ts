// Workflow logic on Temporal's time-skipping test server (the Java SDK's, from Maven Central: scripts/setup-servers.sh
// test-server), the way Temporal's samples test it: the real workflow code, stand-in activities, and a clock the
// server moves forward whenever every workflow waits on a timer. A file's workflows and activities run in a Worker
// of the file's own on a task queue of each test's own.
import { afterAll, beforeAll } from 'bun:test'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { TestWorkflowEnvironment } from '@temporalio/testing'
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker'
import { CACHE_DIR, REPO_ROOT } from '../../../scripts/env'
import { cachedBundle } from '../../../worker/bundle-cache'

let launcher: Promise<string> | undefined

/** The launcher of the cached Java test server (fetched on first use: seconds; then milliseconds). */
export function testServerLauncher(): Promise<string> {
  launcher ??= (async () => {
    const proc = Bun.spawn(['bash', join(REPO_ROOT, 'scripts', 'setup-servers.sh'), 'test-server'], { stdout: 'pipe', stderr: 'inherit' })
    const out = await new Response(proc.stdout).text()
    if ((await proc.exited) !== 0) throw new Error('scripts/setup-servers.sh test-server failed')
    return out.trim().split('\n').at(-1)!
  })()
  return launcher
}

let quiet = false
/** The SDK's workers log every retried activity at WARN: the failures these tests provoke on purpose. In the full run
 *  a test process also runs server files (--no-isolate), so the Runtime is installed as worker/run.ts installs it
 *  otherwise: no signal handlers of the SDK's, the runner decides how a test process stops. */
function quietRuntime() {
  if (quiet) return
  quiet = true
  try {
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      shutdownSignals: [],
      telemetryOptions: { logging: { forward: {}, filter: { core: 'ERROR', other: 'ERROR' } } },
    })
  } catch {
    /* already installed by this process (worker/run.ts, or an earlier file) */
  }
}

const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} }

/** The worker's own bundle of a workflows/ module, from the same on-disk cache the worker uses (worker/bundle-cache.ts):
 *  bundling costs seconds, so a file bundles once and a warm run not at all. */
export function workflowBundle(module: string): Promise<WorkflowBundleWithSourceMap> {
  const workflowsPath = fileURLToPath(new URL(`../../../workflows/${module}.ts`, import.meta.url))
  return cachedBundle(join(CACHE_DIR, 'workflow-bundles'), workflowsPath, [], () => bundleWorkflowCode({ workflowsPath, logger: silent }))
}

/** The SDK gives the server 5 s to listen, a bound a JVM misses when several start at once on a busy machine (the
 *  error names that limit). So the files of a run start theirs one at a time (a lock directory beside the cached
 *  server), and a start that still misses it is tried again. */
async function startServer(path: string): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    const release = await startLock(`${path}.starting`)
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } })
    } catch (err) {
      if (attempt === 8 || !/did not start within/.test(String((err as Error)?.message))) throw err
    } finally {
      release()
    }
    await Bun.sleep(Math.random() * 500 * attempt)
  }
}

/** mkdir is atomic: whoever creates the directory starts next. One left by a killed run is taken over after
 *  STALE_LOCK_MS, longer than any start (the SDK gives up after 5 s). */
const STALE_LOCK_MS = 15_000
async function startLock(dir: string): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(dir)
      return () => rmSync(dir, { recursive: true, force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      try {
        if (Date.now() - statSync(dir).mtimeMs > STALE_LOCK_MS) rmSync(dir, { recursive: true, force: true })
      } catch {
        /* released meanwhile */
      }
      await Bun.sleep(50 + Math.random() * 100)
    }
  }
}

export interface TimeSkipping {
  env: TestWorkflowEnvironment
  /** Records a stand-in activity's call with the server's time (the clock time skipping moves), under `name`. */
  calls: Calls
  /** Runs `fn` with a worker of a module's workflows (the first one given unless named) and these activities polling
   *  a fresh task queue. */
  withWorker<T>(activities: object, fn: (taskQueue: string) => Promise<T>, module?: string): Promise<T>
}

/** One time-skipping server and one bundle of each workflows/ module for the file's tests. */
export function useTimeSkipping(...modules: [string, ...string[]]): TimeSkipping {
  const ts = {} as TimeSkipping
  const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>()
  beforeAll(async () => {
    quietRuntime()
    for (const m of modules) bundles.set(m, workflowBundle(m))
    ts.env = await startServer(await testServerLauncher())
    await Promise.all(bundles.values())
  }, 120_000)
  afterAll(async () => {
    await ts.env?.teardown()
  })
  ts.calls = new Calls(() => ts.env.currentTimeMs())
  ts.withWorker = async (activities, fn, module = modules[0]) => {
    const taskQueue = `unit-${crypto.randomUUID()}`
    const workflowBundle = await bundles.get(module)!
    const worker = await Worker.create({ connection: ts.env.nativeConnection, taskQueue, workflowBundle, activities })
    return worker.runUntil(fn(taskQueue))
  }
  return ts
}

export class Calls {
  readonly list: { name: string; args: unknown[]; at: number }[] = []
  constructor(private readonly now: () => Promise<number>) {}

  async record(name: string, ...args: unknown[]): Promise<void> {
    this.list.push({ name, args, at: await this.now() })
  }

  clear() {
    this.list.length = 0
  }

  of(name: string) {
    return this.list.filter((c) => c.name === name)
  }

  /** Seconds between one call of `name` and the next on the server's clock, compared with `expected` by within(). */
  gapsOf(name: string, expected: number[]): number[] {
    const at = this.of(name).map((c) => c.at)
    return within(
      at.slice(1).map((t, i) => (t - at[i]!) / 1000),
      expected,
    )
  }
}

/** The server's clock jumps a timer's or a retry's wait at once, but runs in real time through the worker's part (a
 *  workflow task, the call): milliseconds, and seconds on a loaded machine. So a measured wait is its expected
 *  duration when it is no shorter and no more than LATE_S longer; the expected value then stands in for it, so a
 *  comparison of lists shows only the waits that are off. LATE_S is well below what tells a schedule's steps apart
 *  over a whole sequence (doubling from 1 s, or minutes apart). */
export const LATE_S = 3
export const within = (measured: number[], expected: number[]) =>
  measured.map((m, i) => (expected[i] !== undefined && m >= expected[i]! && m < expected[i]! + LATE_S ? expected[i]! : Math.round(m * 1000) / 1000))

/** Temporal's retry intervals: initial, doubled each retry, capped; `count` of them. */
export const backoffSeconds = (initial: number, max: number, count: number) => Array.from({ length: count }, (_, i) => Math.min(initial * 2 ** i, max))
