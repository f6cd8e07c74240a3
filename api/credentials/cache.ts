export interface CredentialCacheOptions {
  /** An entry is served only while this replica has proof, at most this old, that its invalidation feed is live.
   *  A change that narrows a token answers only after this long (fence()), so no replica can serve it stale. 0: off. */
  fenceMs: number
  /** Entries are re-read after this long, so lastUsedAt from other replicas shows up. */
  ttlMs: number
  maxEntries: number
}

const FENCE_MARGIN_MS = 5

/** What a cached credential hangs off: change notifications name one of these. */
export interface CredentialIndex {
  apiKeyId: string
  membershipId: string
  userId: string
  /** A change of the tenant's standing (migrations/0045) evicts every token of the tenant. */
  tenantId: string
}

interface Entry<V> {
  value: V
  index: CredentialIndex
  filledAt: number
}

/** Resolved personal access tokens by SHA-256, with the rule that makes revocation immediate on every replica:
 *
 *  Writers that narrow a token (revoke, demote, remove, disable) wait `fenceMs` after commit before answering. Each
 *  replica serves an entry only if it has received, through its LISTEN connection, its own heartbeat sent less than
 *  `fenceMs` ago. NOTIFY is delivered in commit order, so that heartbeat proves every change committed before it
 *  was sent has already evicted. Only durations on each replica's own monotonic clock are compared: no clock sync. */
export class CredentialCache<V> {
  private entries = new Map<string, Entry<V>>()
  private gen = 0
  /** Send time of the newest own heartbeat received on the current feed. */
  private confirmedAt = -Infinity
  /** When the current LISTEN took effect: heartbeats sent earlier prove nothing about it. */
  private feedSince = Infinity
  /** When a token was last looked up here (or the feed started): the feed beats only while lookups come. */
  askedAt = -Infinity
  readonly stats = { hits: 0, misses: 0, fenced: 0 }

  constructor(
    readonly options: CredentialCacheOptions,
    readonly now: () => number = () => performance.now(),
  ) {}

  get enabled(): boolean {
    return this.options.fenceMs > 0
  }

  /** The feed proved itself within the fence: entries may be served. */
  get live(): boolean {
    return this.liveAt(this.now())
  }

  private liveAt(now: number): boolean {
    return this.enabled && now - this.confirmedAt < this.options.fenceMs
  }

  get size(): number {
    return this.entries.size
  }

  /** Read before a database lookup and hand to fill(): an eviction in between makes the looked-up row unsafe to keep. */
  get generation(): number {
    return this.gen
  }

  get(key: string): V | undefined {
    const now = this.now()
    this.askedAt = now
    const entry = this.entries.get(key)
    if (!entry) {
      this.stats.misses++
      return undefined
    }
    if (!this.liveAt(now)) {
      this.stats.fenced++
      this.stats.misses++
      return undefined
    }
    if (now - entry.filledAt >= this.options.ttlMs) {
      this.entries.delete(key)
      this.stats.misses++
      return undefined
    }
    this.stats.hits++
    return entry.value
  }

  /** Keeps the value unless an eviction or feed restart happened since `generation` was read; returns it either way. */
  fill(key: string, index: CredentialIndex, value: V, generation: number): V {
    if (!this.enabled || generation !== this.gen) return value
    if (this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { value, index, filledAt: this.now() })
    return value
  }

  /** A change notification: 'k:<apiKeyId>', 'm:<membershipId>', 'u:<userId>' (migrations/0007) or 't:<tenantId>'
   *  (migrations/0045). Unknown kinds
   *  clear everything: evicting too much only costs lookups. */
  evict(payload: string): void {
    this.gen++
    const sep = payload.indexOf(':')
    const kind = payload.slice(0, sep)
    const id = payload.slice(sep + 1)
    const field = kind === 'k' ? 'apiKeyId' : kind === 'm' ? 'membershipId' : kind === 'u' ? 'userId' : kind === 't' ? 'tenantId' : undefined
    if (!field) {
      this.entries.clear()
      return
    }
    for (const [key, entry] of this.entries) if (entry.index[field] === id) this.entries.delete(key)
  }

  /** The LISTEN connection is (re)established: whatever it missed while down is unknown, so start empty. */
  feedStarted(): void {
    this.entries.clear()
    this.gen++
    this.confirmedAt = -Infinity
    this.feedSince = this.now()
  }

  /** One of our heartbeats, sent at `sentAt`, came back through the feed. */
  confirm(sentAt: number): void {
    if (sentAt >= this.feedSince && sentAt > this.confirmedAt) this.confirmedAt = sentAt
  }

  /** How long ago the feed was last proven live (Infinity: never on this connection). */
  staleness(): number {
    return this.now() - this.confirmedAt
  }

  /** Call after committing a change that narrows a token and before answering: once it resolves, no replica
   *  serves the old state from its cache. */
  async fence(): Promise<void> {
    // The margin covers timers that fire early and clock-rate drift between machines.
    if (this.enabled) await Bun.sleep(this.options.fenceMs + FENCE_MARGIN_MS)
  }
}
