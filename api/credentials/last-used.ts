import type { Db } from '../platform/db'
import { IntervalFlush } from '../platform/interval-flush'
import type { Logger } from '../platform/log'
import { recordPatUses } from '../api-keys/queries'

/** Collects PAT uses in memory and writes them in one UPDATE per flush interval, never one per request.
 *  `lastUsedAt` may therefore be stale by up to one interval, as the interface allows. */
export class LastUsedRecorder {
  private pending = new Map<string, number>()

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

  /** `at`: epoch ms (a number, so the hot path allocates nothing). */
  record(apiKeyId: string, at = Date.now()): void {
    this.pending.set(apiKeyId, at)
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return
    const batch = [...this.pending].map(([id, at]) => ({ id, at: new Date(at) }))
    this.pending = new Map()
    try {
      await recordPatUses(this.db, batch)
    } catch (err) {
      this.log.warn('lastUsedAt flush failed; will retry with the next batch', { err, count: batch.length })
      for (const { id, at } of batch) if (!this.pending.has(id)) this.pending.set(id, at.getTime())
    }
  }

  stop(): Promise<void> {
    return this.every.stop()
  }
}
