/** What activities report to the worker's metrics (worker/metrics.ts makes them Prometheus series). Outcomes are
 *  fixed words, never ids: each becomes a label value. */
export interface ActivityMetrics {
  /** One webhook POST: `delivered`, `failed` or `stopped`, and which attempt it was. */
  webhookAttempt(outcome: 'delivered' | 'failed' | 'stopped', attempt: number): void
  /** One edge package archive written (or failed for good). */
  packageBuild(outcome: 'ready' | 'failed', seconds?: number, bytes?: number): void
  mail(outcome: 'sent' | 'failed'): void
}
