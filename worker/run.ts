// Starts a Temporal worker for every task queue of worker/queues.ts on one connection, so the production entry
// point (worker/main.ts), tests and benchmarks all run exactly the same workers.
import { fileURLToPath } from 'node:url'
import { Client } from '@temporalio/client'
import type { LogLevel as TemporalLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common'
import { bundleWorkflowCode, IllegalStateError, NativeConnection, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker'
import { composeServices } from '../api/compose'
import type { Config } from '../api/platform/config'
import { createDb, type Sql } from '../api/platform/db'
import { createLogger, type Logger } from '../api/platform/log'
import { serveMetrics } from '../api/platform/metrics'
import { clientInterceptors } from '../api/platform/temporal'
import { tracing } from '../api/platform/tracing'
import type { Resolver } from '../api/platform/outbound/policy'
import { taskQueues } from '../workflows/contract'
import type { ActivityDeps } from '../activities'
import { cachedBundle } from './bundle-cache'
import { ensureSchedule } from './ensure-schedule'
import { createWorkerMetrics } from './metrics'
import { taskQueueTable, type TaskQueue } from './queues'
import { startWebhookDispatcher, type WebhookDispatcher } from './webhook-dispatcher'
import { tracedWorkerOptions, workflowTracingModules } from './tracing'

/** Every workflow, for replaying histories; each queue's worker bundles only its own module. */
export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url))

export interface StartWorkerOptions {
  log?: Logger
  /** Share an existing pool (tests); otherwise the worker opens its own and closes it on shutdown. */
  sql?: Sql
  /** Reconcile Temporal schedules on start (default true). */
  schedules?: boolean
  /** Outbound name resolution for activities (tests of DNS rebinding); the system's by default. */
  resolve?: Resolver
  /** Serve the Prometheus scrape endpoint (docs/operations.md "Metrics"): the production entry point does, tests choose. The
   *  Temporal SDK's exporter is per process, so only the first worker of a process can have it. */
  metrics?: boolean
}

export interface RunningWorker {
  /** One per row of worker/queues.ts that the process polls (`WORKER_TASK_QUEUES`). */
  workers: Partial<Record<TaskQueue['queue'], Worker>>
  client: Client
  /** The scrape URL when `metrics` was asked for. */
  metricsUrl?: string
  /** Settles once the worker has stopped and its resources are released; rejects if the worker failed. */
  done: Promise<void>
  shutdown(): Promise<void>
}

/** Routes the SDK's own logs (and Core's, forwarded) through our JSON logger instead of its console format. */
function temporalLogger(log: Logger, opts: { quietInfo?: boolean } = {}): TemporalLogger {
  const emit = (level: TemporalLevel, message: string, meta?: LogMetadata) => {
    const fields = { ...meta }
    if (level === 'ERROR') log.error(message, fields)
    else if (level === 'WARN') log.warn(message, fields)
    else if (level === 'INFO' && !opts.quietInfo) log.info(message, fields)
    else log.debug(message, fields)
  }
  return {
    log: emit,
    trace: (m, meta) => emit('TRACE', m, meta),
    debug: (m, meta) => emit('DEBUG', m, meta),
    info: (m, meta) => emit('INFO', m, meta),
    warn: (m, meta) => emit('WARN', m, meta),
    error: (m, meta) => emit('ERROR', m, meta),
  }
}

let runtimeReady = false
function installRuntime(log: Logger, prometheus?: string) {
  if (runtimeReady) return
  try {
    Runtime.install({
      logger: temporalLogger(log.child({ component: 'temporal-sdk' })),
      // The embedding process decides how signals stop the worker (worker/main.ts), not the SDK.
      shutdownSignals: [],
      telemetryOptions: {
        logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
        ...(prometheus ? { metrics: { prometheus: { bindAddress: prometheus, countersTotalSuffix: true } } } : {}),
      },
    })
  } catch (err) {
    // The Runtime is a per-process singleton; a host that installed its own keeps it.
    if (!(err instanceof IllegalStateError)) throw err
  }
  runtimeReady = true
}

// Bundling the workflow code with webpack is most of a worker's start-up time; a process that starts
// several workers (tests, benchmarks) pays it once per workflow module.
const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>()
// webpack's multi-line build report is only interesting when debugging the bundle.
function workflowBundle(workflowsPath: string, log: Logger, cacheDir: string | undefined): Promise<WorkflowBundleWithSourceMap> {
  // A traced process bundles the tracing workflow interceptors in; an untraced one has none to run.
  const workflowInterceptorModules = workflowTracingModules()
  const key = `${workflowsPath} ${workflowInterceptorModules.join(' ')}`
  let bundle = bundles.get(key)
  if (!bundle) {
    const build = () =>
      bundleWorkflowCode({
        workflowsPath,
        workflowInterceptorModules,
        logger: temporalLogger(log.child({ component: 'workflow-bundler' }), { quietInfo: true }),
      })
    bundle = cacheDir ? cachedBundle(cacheDir, workflowsPath, workflowInterceptorModules, build) : build()
    bundle.catch(() => bundles.delete(key))
    bundles.set(key, bundle)
  }
  return bundle
}

type QueueKey = TaskQueue['queue']

/** The rows of worker/queues.ts a process polls: those WORKER_TASK_QUEUES names, or all. A name that is no queue stops
 *  the start, so a typo cannot leave a queue unpolled without a word. */
export function polledQueues(names: readonly string[]): readonly TaskQueue[] {
  if (names.length === 0) return taskQueueTable
  const unknown = names.filter((n) => !taskQueueTable.some((q) => q.queue === n))
  if (unknown.length > 0) {
    throw new Error(`WORKER_TASK_QUEUES names no queue: ${unknown.join(', ')} (the queues: ${taskQueueTable.map((q) => q.queue).join(', ')})`)
  }
  return taskQueueTable.filter((q) => names.includes(q.queue))
}

export async function startWorker(config: Config, opts: StartWorkerOptions = {}): Promise<RunningWorker> {
  const t0 = performance.now()
  const log = opts.log ?? createLogger(config.LOG_LEVEL, { service: 'worker' })
  // Before anything is opened: a name that is no queue leaves nothing to close.
  const polled = polledQueues(config.WORKER_TASK_QUEUES)
  const sdkMetrics = opts.metrics ? `${config.METRICS_HOST}:${config.TEMPORAL_METRICS_PORT}` : undefined
  installRuntime(log, sdkMetrics)
  const ownSql = !opts.sql
  const sql = opts.sql ?? createDb(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, connectTimeoutSeconds: config.DATABASE_CONNECT_TIMEOUT_SECONDS })
  const activityMetrics = createWorkerMetrics(sql)
  // The process's one Temporal client rides on the workers' connection; closing that connection is its end.
  const release = async (connection?: NativeConnection) => {
    await connection?.close().catch((err) => log.warn('closing the Temporal connection failed', { err }))
    if (ownSql) await sql.end({ timeout: 5 })
  }
  const names = taskQueues(config)

  let connection: NativeConnection | undefined
  let client: Client | undefined
  const workers: Partial<Record<QueueKey, Worker>> = {}
  let bundleMs = 0
  try {
    const tBundle = performance.now()
    const code = await Promise.all(polled.map((q) => workflowBundle(q.workflowsPath, log, config.WORKFLOW_BUNDLE_CACHE_DIR)))
    bundleMs = performance.now() - tBundle
    connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS })
    client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, interceptors: clientInterceptors() })
    const deps: ActivityDeps = { ...composeServices(config, sql, log, client), activityMetrics, resolve: opts.resolve }
    for (const [i, q] of polled.entries()) {
      workers[q.queue] = await Worker.create({
        connection,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: names[q.queue],
        workflowBundle: code[i]!,
        activities: q.activities(deps),
        // Lets in-flight activities finish a batch on shutdown; they heartbeat, so they see cancellation after.
        shutdownGraceTime: '10 seconds',
        ...tracedWorkerOptions(tracing()),
      })
    }
  } catch (err) {
    await release(connection)
    throw err
  }

  const conn = connection
  const temporal = client!
  const all = polled.map((q) => workers[q.queue]!)
  let dispatcher: WebhookDispatcher | undefined
  const scrape = opts.metrics
    ? serveMetrics(activityMetrics.registry, {
        host: config.METRICS_HOST,
        port: config.WORKER_METRICS_PORT,
        log,
        extra: () => fetch(`http://${sdkMetrics}/metrics`).then((r) => r.text()),
      })
    : undefined
  const done = Promise.all(all.map((w) => w.run()))
    .then(() => {})
    .finally(async () => {
      await dispatcher?.stop()
      await scrape?.stop()
      await release(conn)
    })
  // Marks the rejection as handled until the caller awaits `done`, so a worker failing during the schedule
  // step below does not crash the process as an unhandled rejection.
  done.catch(() => {})
  const shutdown = async () => {
    // The dispatcher first: it starts workflows on the connection the workers are about to close.
    await dispatcher?.stop()
    for (const w of all) if (w.getState() === 'RUNNING') w.shutdown()
    await done
  }

  // A schedule starts workflows on its queue, so reconcile them only once the workers poll.
  if (opts.schedules ?? true) {
    try {
      for (const q of polled) for (const schedule of q.schedules(config)) await ensureSchedule(temporal, schedule, log)
    } catch (err) {
      await shutdown().catch(() => {})
      throw err
    }
  }
  if (config.WEBHOOK_DISPATCHER) {
    try {
      dispatcher = await startWebhookDispatcher({ sql, client: temporal, config, log: log.child({ component: 'webhook-dispatcher' }) })
    } catch (err) {
      await shutdown().catch(() => {})
      throw err
    }
  }
  log.info('worker started', {
    taskQueues: polled.map((q) => names[q.queue]),
    namespace: config.TEMPORAL_NAMESPACE,
    address: config.TEMPORAL_ADDRESS,
    bundleMs: Math.round(bundleMs),
    startMs: Math.round(performance.now() - t0),
    runtime: process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`,
  })
  return { workers, client: temporal, done, shutdown, metricsUrl: scrape?.url }
}
