import { Counter, Gauge, Histogram } from 'prom-client'
import { oldestUndispatchedAgeSeconds } from '../api/events/queries'
import type { Sql } from '../api/platform/db'
import { processRegistry } from '../api/platform/metrics'
import type { ActivityMetrics } from '../activities/metrics'

// Attempts past the sixth share one label value, so a long retry schedule cannot grow the series.
const attemptLabel = (attempt: number) => (attempt >= 6 ? '6+' : String(attempt))

/** The worker's own metrics (docs/operations.md "Metrics"); the Temporal SDK's come from its runtime's exporter and are appended
 *  to the same scrape (worker/run.ts). */
export function createWorkerMetrics(sql: Sql) {
  const registry = processRegistry('worker')
  const attempts = new Counter({
    name: 'rcp_webhook_delivery_attempts_total',
    help: 'Webhook POSTs by outcome and attempt number',
    labelNames: ['outcome', 'attempt'] as const,
    registers: [registry],
  })
  const builds = new Counter({
    name: 'rcp_edge_package_builds_total',
    help: 'Edge package builds finished, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  const buildSeconds = new Histogram({
    name: 'rcp_edge_package_build_duration_seconds',
    help: 'Time to write one package archive',
    buckets: [1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  })
  const buildBytes = new Counter({ name: 'rcp_edge_package_build_bytes_total', help: 'Bytes of package archives written', registers: [registry] })
  const mail = new Counter({
    name: 'rcp_mail_total',
    help: 'Mail handed to the SMTP server, or given up',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'rcp_webhook_dispatch_lag_seconds',
    help: 'Age of the oldest committed event not yet fanned out to webhook messages (0 when none)',
    registers: [registry],
    async collect() {
      this.set(await oldestUndispatchedAgeSeconds(sql))
    },
  })
  const counts: ActivityMetrics = {
    webhookAttempt: (outcome, attempt) => attempts.inc({ outcome, attempt: attemptLabel(attempt) }),
    packageBuild(outcome, seconds, bytes) {
      builds.inc({ outcome })
      if (seconds !== undefined) buildSeconds.observe(seconds)
      if (bytes !== undefined) buildBytes.inc(bytes)
    },
    mail: (outcome) => mail.inc({ outcome }),
  }
  return { registry, ...counts }
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>
