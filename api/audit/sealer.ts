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
  private failing = false

  constructor(
    private db: Db,
    private log: Logger,
    private intervalMs: number,
    private batch: number,
  ) {}

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.schedule()
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.running = this.step().finally(() => this.schedule())
    }, this.intervalMs)
    this.timer.unref?.()
  }

  /** Seals until a step finds less than a full batch. Failures (the database away) wait for the next interval, and
   *  are logged once until a step succeeds again, not five times a second. */
  async step(): Promise<void> {
    try {
      // A full batch means a backlog: keep going, unless the process is stopping.
      while ((await sealAuditBatch(this.db, this.batch)) >= this.batch && !this.stopped) {
        /* the next batch */
      }
      if (this.failing) this.log.info('audit sealing works again')
      this.failing = false
    } catch (err) {
      if (!this.failing) this.log.warn('audit sealing failed; every interval retries', { err })
      this.failing = true
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running
  }
}
