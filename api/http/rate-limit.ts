export interface Take {
  ok: boolean
  limit: number
  remaining: number
  /** seconds until a request would be admitted again (0 when ok) */
  retryAfter: number
}

/** Token buckets in this process's memory: refills continuously at perMinute/60 tokens a second.
 *  Budgets are per replica (see README "Rate budgets"); no shared store sits on the request path. */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>()

  constructor(private now: () => number = () => performance.now()) {}

  take(key: string, perMinute: number): Take {
    if (perMinute <= 0) return { ok: true, limit: 0, remaining: 0, retryAfter: 0 }
    const t = this.now()
    const rate = perMinute / 60_000
    const b = this.buckets.get(key) ?? { tokens: perMinute, at: t }
    b.tokens = Math.min(perMinute, b.tokens + (t - b.at) * rate)
    b.at = t
    if (this.buckets.size > 100_000) this.sweep(t)
    if (b.tokens >= 1) {
      b.tokens -= 1
      this.buckets.set(key, b)
      return { ok: true, limit: perMinute, remaining: Math.floor(b.tokens), retryAfter: 0 }
    }
    this.buckets.set(key, b)
    return { ok: false, limit: perMinute, remaining: 0, retryAfter: Math.ceil((1 - b.tokens) / rate / 1000) }
  }

  // A bucket idle for a minute has refilled completely, so dropping it is the same as keeping it.
  private sweep(t: number) {
    for (const [k, b] of this.buckets) if (t - b.at >= 60_000) this.buckets.delete(k)
  }
}
