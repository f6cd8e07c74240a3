// API requests by credential class, folded in memory as the request budgets admit them and written as one event per
// tenant and class per flush, never a row per request.
import type { Db } from '../platform/db'
import { IntervalFlush } from '../platform/interval-flush'
import type { Logger } from '../platform/log'
import { apiRequestsMeter } from '../usage/meters'
import { recordUsageBatch, type UsageEvent } from '../usage/record'

type CredentialClass = 'session' | 'personal_access_token'
const MAX_FAILURES = 10

export class RequestTally {
  private counts = new Map<string, number>()
  /** A batch whose write failed: retried as it was, with the same keys, so a write that committed but answered an
   *  error is not counted twice. */
  private unsent: UsageEvent[] | null = null
  private seq = 0
  private failures = 0
  /** This process's name in the keys: two replicas' batches never share one. */
  private readonly replica = crypto.randomUUID()

  constructor(
    private db: Db,
    private log: Logger,
    intervalMs: number,
  ) {
    this.every = new IntervalFlush(() => this.flush(), intervalMs)
  }

  private readonly every: IntervalFlush

  start(): void {
    this.every.start()
  }

  /** One admitted request (the hot path: a map update). */
  count(tenantId: string, credential: CredentialClass): void {
    const key = `${tenantId} ${credential}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }

  async flush(): Promise<void> {
    if (!this.unsent) {
      if (this.counts.size === 0) return
      const seq = ++this.seq
      const occurredAt = new Date()
      this.unsent = [...this.counts].map(([key, n]) => {
        const [tenantId, credential] = key.split(' ') as [string, CredentialClass]
        const meter = apiRequestsMeter(credential)
        return { tenantId, projectId: null, meter, quantity: n, occurredAt, idempotencyKey: `${meter}:${this.replica}:${seq}` }
      })
      this.counts = new Map()
    }
    const batch = this.unsent
    try {
      await recordUsageBatch(this.db, batch)
      this.unsent = null
      this.failures = 0
    } catch (err) {
      // Retried with the next flush while new counts gather for the one after; a batch that fails every time is
      // dropped rather than holding back the ones behind it.
      const dropped = ++this.failures >= MAX_FAILURES
      this.log.warn(dropped ? 'API request usage dropped after repeated failures' : 'API request usage not written; retried with the next flush', {
        err,
        events: batch.length,
      })
      if (dropped) {
        this.unsent = null
        this.failures = 0
      }
    }
  }

  stop(): Promise<void> {
    return this.every.stop()
  }
}
