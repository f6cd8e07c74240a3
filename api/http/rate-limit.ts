/** Token buckets in this process's memory: refills continuously at perMinute/60 tokens a second.
 *  Budgets are per replica (see README "Rate budgets"); no shared store sits on the request path. */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>()

  constructor(private now: () => number = () => performance.now()) {}

  /** 0 when the request is admitted (allocating nothing on that path); otherwise the seconds until one would be. */
  admit(key: string, perMinute: number): number {
    if (perMinute <= 0) return 0
    const t = this.now()
    const rate = perMinute / 60_000
    let b = this.buckets.get(key)
    if (!b) {
      if (this.buckets.size > 100_000) this.sweep(t)
      b = { tokens: perMinute, at: t }
      this.buckets.set(key, b)
    }
    b.tokens = Math.min(perMinute, b.tokens + (t - b.at) * rate)
    b.at = t
    if (b.tokens >= 1) {
      b.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000))
  }

  // A bucket idle for a minute has refilled completely, so dropping it is the same as keeping it.
  private sweep(t: number) {
    for (const [k, b] of this.buckets) if (t - b.at >= 60_000) this.buckets.delete(k)
  }
}
