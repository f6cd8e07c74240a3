import { randomUUID } from 'node:crypto'
import { createDb, type Sql } from '../platform/db'
import type { Logger } from '../platform/log'
import type { CredentialCache } from './cache'

export const CREDENTIAL_CHANNEL = 'rcp_credentials'
/** application_name of the feed's connections is this plus ":<replicaId>", so operators (and the stall test) find them. */
export const CREDENTIAL_FEED_NAME = 'rcp-credential-feed'
const HEARTBEATS_PER_FENCE = 5
/** A replica no token was looked up on for this many fences (30 s at the default) stops beating: each heartbeat costs
 *  its process about a millisecond of CPU, ten a second. The next lookup reads Postgres and starts the beats again. */
const QUIET_AFTER_FENCES = 60

/** Keeps one replica's CredentialCache honest: a LISTEN connection applies change notifications (migrations/0007)
 *  and our own heartbeats, sent every fence/5 while tokens are looked up here, prove the connection is live and
 *  caught up. */
export class CredentialFeed {
  readonly replicaId = randomUUID()
  private client: Sql | undefined
  private timer: ReturnType<typeof setInterval> | undefined
  private beating = false
  private startedAt = 0
  private warned = false
  /** Send time of the oldest own heartbeat not yet back, if one is out: a feed is dead only if one stays out. */
  private outSince: number | undefined

  constructor(
    private databaseUrl: string,
    private cache: CredentialCache<unknown>,
    private log: Logger,
  ) {}

  async start(): Promise<void> {
    if (!this.cache.enabled || this.timer) return
    this.timer = setInterval(() => void this.beat(), Math.max(1, Math.floor(this.cache.options.fenceMs / HEARTBEATS_PER_FENCE)))
    this.timer.unref?.()
    await this.connect().catch((err) => this.warnOnce('credential feed could not LISTEN; PATs are read from Postgres meanwhile', { err }))
    this.cache.askedAt = this.cache.now() // a replica just started is about to be asked
    await this.firstHeartbeat()
  }

  // A replica that starts serving before its first heartbeat returns would read every PAT from Postgres until then.
  private async firstHeartbeat(): Promise<void> {
    if (!this.client) return
    await this.beat()
    const until = Date.now() + this.cache.options.fenceMs
    while (!this.cache.live && Date.now() < until) await Bun.sleep(5)
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.client?.end({ timeout: 1 })
    this.client = undefined
  }

  private async connect(): Promise<void> {
    // Heartbeats change no data: skipping the WAL flush makes them nearly free, and delivery order is unaffected.
    const client = createDb(this.databaseUrl, { max: 1, name: `${CREDENTIAL_FEED_NAME}:${this.replicaId}`, settings: { synchronous_commit: 'off' } })
    this.client = client
    this.startedAt = this.cache.now()
    // postgres.js re-issues LISTEN after a dropped connection and calls the third argument each time.
    await client.listen(
      CREDENTIAL_CHANNEL,
      (payload) => this.receive(payload),
      () => this.cache.feedStarted(),
    )
  }

  private receive(payload: string): void {
    if (!payload.startsWith('hb:')) {
      this.cache.evict(payload)
      return
    }
    const [, replica, sentAt] = payload.split(':')
    if (replica !== this.replicaId) return
    this.cache.confirm(Number(sentAt))
    if (this.outSince !== undefined && Number(sentAt) >= this.outSince) this.outSince = undefined
  }

  private async beat(): Promise<void> {
    if (this.beating || !this.client) return
    const now = this.cache.now()
    if (now - this.cache.askedAt > QUIET_AFTER_FENCES * this.cache.options.fenceMs) return
    this.beating = true
    this.outSince ??= now
    try {
      await this.client.notify(CREDENTIAL_CHANNEL, `hb:${this.replicaId}:${now}`)
      if (this.warned && this.cache.live) {
        this.warned = false
        this.log.info('credential feed live again: PAT cache in use')
      }
    } catch (err) {
      this.warnOnce('credential heartbeat failed: PATs are read from Postgres until the feed recovers', { err })
    } finally {
      this.beating = false
    }
    await this.restartIfDead()
  }

  // A LISTEN that failed to come back (Postgres was down when postgres.js retried) never recovers by itself. Safety
  // does not depend on this, since a silent feed only stops the cache from serving; throughput does.
  private async restartIfDead(): Promise<void> {
    const deadFor = Math.max(10_000, 20 * this.cache.options.fenceMs)
    const now = this.cache.now()
    if (!this.timer || this.outSince === undefined || now - this.outSince < deadFor || now - this.startedAt < deadFor) return
    this.warnOnce('credential feed silent: reconnecting its LISTEN connection', { silentMs: Math.round(now - this.outSince) })
    const old = this.client
    this.client = undefined
    this.outSince = undefined
    await old?.end({ timeout: 1 }).catch(() => {})
    await this.connect().catch((err) => this.log.warn('credential feed reconnect failed; will retry', { err }))
  }

  private warnOnce(msg: string, fields: Record<string, unknown>): void {
    if (this.warned) return
    this.warned = true
    this.log.warn(msg, fields)
  }
}
