import type { Db } from '../platform/db'
import type { Logger } from '../platform/log'
import { recordPatUses } from '../api-keys/queries'

/** Collects PAT uses in memory and writes them in one UPDATE per flush interval, never one per request.
 *  `lastUsedAt` may therefore be stale by up to one interval, as the interface allows. */
export class LastUsedRecorder {
  private pending = new Map<string, number>()
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private db: Db,
    private log: Logger,
    private intervalMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs)
    this.timer.unref?.()
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

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flush()
  }
}
