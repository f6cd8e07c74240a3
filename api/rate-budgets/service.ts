// Request budgets that hold across replicas (docs/api.md "Rate budgets"). Each replica leases a small share of a budget
// from the shared bucket in Postgres and spends it locally, so a request waits on the database only when its
// replica's lease ran out, and a refused caller is refused locally until its retry time. Tokens a replica leased and
// did not spend are lost to the others, so the budget is kept within one lease per replica (LEASE_SHARE of it each).
import type { Sql } from '../platform/db'
import type { Logger } from '../platform/log'
import { leaseTokens } from './queries'

/** The share of a budget one lease takes: with two replicas the budget granted stays within 2×2% of the limit. */
export const LEASE_SHARE = 0.02

type Lease = { tokens: number; refusedUntil: number; renewedAt: number; pending?: Promise<void> }

/** 0 when admitted, else the seconds until a token will be there; a promise when the lease had to be renewed. */
export type Admission = number | Promise<number>

export class SharedBudgets {
  private kinds = new Map<string, Map<string, Lease>>()
  private lastWarning = 0

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    /** The replica's own bucket, used while the shared store cannot be reached (fail open, see docs/api.md "Rate budgets"). */
    private readonly fallback: (kind: string, id: string, perMinute: number) => number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  admit(kind: string, id: string, perMinute: number): Admission {
    if (perMinute <= 0) return 0
    let leases = this.kinds.get(kind)
    if (!leases) this.kinds.set(kind, (leases = new Map()))
    let lease = leases.get(id)
    if (!lease) {
      if (leases.size > 100_000) this.sweep(leases)
      leases.set(id, (lease = { tokens: 0, refusedUntil: 0, renewedAt: 0 }))
    }
    if (lease.tokens >= 1) {
      lease.tokens -= 1
      return 0
    }
    const t = this.now()
    if (lease.refusedUntil > t) return Math.max(1, Math.ceil((lease.refusedUntil - t) / 1000))
    const renewed = (lease.pending ??= this.renew(kind, id, perMinute, lease))
    // Concurrent requests may drain the renewed lease first, so this is admit() once more (which renews again, or
    // refuses once the shared bucket is empty).
    return renewed.then(() => this.admit(kind, id, perMinute))
  }

  private async renew(kind: string, id: string, perMinute: number, lease: Lease): Promise<void> {
    const want = Math.max(1, Math.floor(perMinute * LEASE_SHARE))
    lease.renewedAt = this.now()
    try {
      const n = await leaseTokens(this.sql, kind, id, perMinute, want)
      if (n > 0) lease.tokens += n
      else lease.refusedUntil = this.now() + -n * 1000
    } catch (err) {
      // Fail open: a database the budgets cannot reach is one the requests cannot use either, so refusing them all
      // would add nothing; the replica's own bucket (the per-replica budget) still bounds each caller.
      if (this.now() - this.lastWarning > 10_000) {
        this.lastWarning = this.now()
        this.log.warn('shared request budgets unreachable; each replica enforces its own until they are back', { err })
      }
      const retryAfter = this.fallback(kind, id, perMinute)
      if (retryAfter === 0) lease.tokens += 1
      else lease.refusedUntil = this.now() + retryAfter * 1000
    } finally {
      lease.pending = undefined
    }
  }

  // A lease not renewed for a minute belongs to a caller who went quiet: dropping it forgets at most one lease.
  private sweep(leases: Map<string, Lease>) {
    const t = this.now()
    for (const [k, l] of leases) if (!l.pending && t - l.renewedAt > 60_000 && l.refusedUntil < t) leases.delete(k)
  }
}
