// Workflow logic on Temporal's time-skipping test server (the Java SDK's, from Maven Central: scripts/setup-servers.sh
// test-server), the way Temporal's samples test it: the real workflow code, stand-in activities, and a clock the
// server moves forward whenever every workflow waits on a timer. A file's workflows and activities run in a Worker
// of the file's own on a task queue of each test's own.
import { afterAll, beforeAll } from 'bun:test'
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
/** The SDK's workers log every retried activity at WARN: the failures these tests provoke on purpose. */
function quietRuntime() {
  if (quiet) return
  quiet = true
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { forward: {}, filter: { core: 'ERROR', other: 'ERROR' } } } })
  } catch { /* already installed by this process */ }
}

const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} }

/** The worker's own bundle of a workflows/ module, from the same on-disk cache the worker uses (worker/bundle-cache.ts):
 *  bundling costs seconds, so a file bundles once and a warm run not at all. */
export function workflowBundle(module: string): Promise<WorkflowBundleWithSourceMap> {
  const workflowsPath = fileURLToPath(new URL(`../../../workflows/${module}.ts`, import.meta.url))
  return cachedBundle(join(CACHE_DIR, 'workflow-bundles'), workflowsPath, [], () => bundleWorkflowCode({ workflowsPath, logger: silent }))
}

export interface TimeSkipping {
  env: TestWorkflowEnvironment
  /** Records a stand-in activity's call with the server's time (the clock time skipping moves), under `name`. */
  calls: Calls
  /** Runs `fn` with a worker of `module`'s workflows and these activities polling a fresh task queue. */
  withWorker<T>(activities: object, fn: (taskQueue: string) => Promise<T>): Promise<T>
}

/** One time-skipping server and one bundle of `module` for the file's tests. */
export function useTimeSkipping(module: string): TimeSkipping {
  const ts = {} as TimeSkipping
  let bundle: Promise<WorkflowBundleWithSourceMap>
  beforeAll(async () => {
    quietRuntime()
    bundle = workflowBundle(module)
    const path = await testServerLauncher()
    ts.env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } })
    await bundle
  }, 120_000)
  afterAll(async () => {
    await ts.env?.teardown()
  })
  ts.calls = new Calls(() => ts.env.currentTimeMs())
  ts.withWorker = async (activities, fn) => {
    const taskQueue = `unit-${crypto.randomUUID()}`
    const worker = await Worker.create({ connection: ts.env.nativeConnection, taskQueue, workflowBundle: await bundle, activities })
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

  /** Whole seconds between one call of `name` and the next, on the server's clock. That clock also runs through the
   *  tasks and calls between two timers (milliseconds) and never backwards, so flooring gives the timer's duration. */
  gapsOf(name: string): number[] {
    const at = this.of(name).map((c) => c.at)
    return at.slice(1).map((t, i) => Math.floor((t - at[i]!) / 1000))
  }
}

/** Temporal's retry intervals: initial, doubled each retry, capped; `count` of them. */
export const backoffSeconds = (initial: number, max: number, count: number) =>
  Array.from({ length: count }, (_, i) => Math.min(initial * 2 ** i, max))
