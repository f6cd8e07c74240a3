import type { Db } from '../platform/db'
import type { Logger } from '../platform/log'
import { sealAuditBatch } from './queries'

/** Seals the audit entries committed since its last step, every `intervalMs`, many to a transaction: the change
 *  that writes an entry pays one insert (migrations/0024), and the chain's lock, hashes and index entries are paid
 *  here, once per batch. Each replica runs one; they skip the chains another is sealing. A backlog (a sealer that
 *  was down) is taken `batch` entries a step, one step after another, until it is gone. */
export class AuditSealer {
  private timer: ReturnType<typeof setTimeout> | undefined
  private running: Promise<void> | undefined
  private stopped = true

  constructor(private db: Db, private log: Logger, private intervalMs: number, private batch: number) {}

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.schedule()
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => { this.running = this.step().finally(() => this.schedule()) }, this.intervalMs)
    this.timer.unref?.()
  }

  /** Seals until a step finds less than a full batch. Failures (the database away) wait for the next interval. */
  async step(): Promise<void> {
    try {
      while (!this.stopped && (await sealAuditBatch(this.db, this.batch)) >= this.batch) { /* a backlog: keep going */ }
    } catch (err) {
      this.log.warn('audit sealing failed; the next step retries', { err })
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running
  }
}
