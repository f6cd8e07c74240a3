// The API process: `bun api/main.ts`. startApi takes how the app is built, so an entry point that serves more than
// the product (bench/api-entry.ts: the benchmarks' baselines) runs this same process; this one builds the app as is.
import { buildApp, type App } from './app'
import { composeApi, type AppDeps } from './compose'
import { loadConfig } from './platform/config'
import { serveMetrics } from './platform/metrics'
import { createDb, surviveDriverClosedSocketWrites } from './platform/db'
import { createLogger } from './platform/log'
import { startTracing } from './platform/tracing'

export async function startApi(build: (deps: AppDeps) => App = buildApp) {
  const config = loadConfig()
  const log = createLogger(config.LOG_LEVEL, { service: 'api' })
  surviveDriverClosedSocketWrites(log)
  // Before the pool, the app and the Temporal client are made: each asks once whether the process traces.
  const traces = startTracing('rcp-api', log)
  const sql = createDb(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, connectTimeoutSeconds: config.DATABASE_CONNECT_TIMEOUT_SECONDS })

  const deps = composeApi(config, sql, log)
  deps.lastUsed.start()
  deps.auditSealer.start()
  deps.requestTally.start()
  await deps.credentialFeed.start()
  const app = build(deps).listen({ hostname: config.HOST, port: config.PORT })
  log.info('api listening', { url: `http://${config.HOST}:${app.server?.port}` })
  const metrics = config.METRICS ? serveMetrics(deps.metrics.registry, { host: config.METRICS_HOST, port: config.METRICS_PORT, log }) : null

  let stopping = false
  async function shutdown(signal: string) {
    if (stopping) return
    stopping = true
    log.info('api stopping', { signal })
    await app.stop()
    await metrics?.stop()
    await deps.lastUsed.stop()
    await deps.requestTally.stop()
    await deps.auditSealer.stop()
    await deps.credentialFeed.stop()
    await deps.temporal.close()
    await sql.end({ timeout: 5 })
    await traces?.shutdown()
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
}

if (import.meta.main) await startApi()
