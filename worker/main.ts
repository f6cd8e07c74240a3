// Worker process entry point: `bun worker/main.ts`. Everything but process concerns lives in run.ts.
import { loadConfig } from '../api/platform/config'
import { surviveDriverClosedSocketWrites } from '../api/platform/db'
import { createLogger } from '../api/platform/log'
import { startTracing } from '../api/platform/tracing'
import { startWorker } from './run'

const config = loadConfig()
const log = createLogger(config.LOG_LEVEL, { service: 'worker' })
surviveDriverClosedSocketWrites(log)
// Before the worker: its pool, bundles, interceptors and clients ask once whether the process traces.
const traces = startTracing('rcp-worker', log)

const running = await startWorker(config, { log, metrics: config.METRICS }).catch((err) => {
  // The SDK wraps the server's reason (say, an unregistered search attribute) in `cause`.
  log.error('worker failed to start', { err, cause: err instanceof Error ? err.cause : undefined })
  process.exit(1)
})

let stopping = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return
    stopping = true
    log.info('worker shutting down', { signal })
    running
      .shutdown()
      .then(() => traces?.shutdown())
      .then(
        () => {
          log.info('worker stopped')
          process.exit(0)
        },
        (err) => {
          log.error('worker stopped with an error', { err })
          process.exit(1)
        },
      )
  })
}

running.done.catch((err) => {
  log.error('worker failed', { err })
  process.exit(1)
})
