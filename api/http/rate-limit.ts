/** Token buckets in this process's memory: refills continuously at perMinute/60 tokens a second.
 *  Budgets are per replica (see docs/api.md "Rate budgets"); no shared store sits on the request path. */
type Bucket = { tokens: number; at: number }

export class RateLimiter {
  // One map per kind of key (ip, user, tenant), keyed by the bare id: the ids of a cached principal are the same
  // strings on every request, so no key is built and hashed per request.
  private kinds = new Map<string, Map<string, Bucket>>()

  constructor(private now: () => number = () => performance.now()) {}

  /** 0 when the request is admitted (allocating nothing on that path); otherwise the seconds until one would be. */
  admit(kind: string, id: string, perMinute: number): number {
    if (perMinute <= 0) return 0
    const t = this.now()
    const rate = perMinute / 60_000
    let buckets = this.kinds.get(kind)
    if (!buckets) this.kinds.set(kind, (buckets = new Map()))
    let b = buckets.get(id)
    if (!b) {
      if (buckets.size > 100_000) sweep(buckets, t)
      b = { tokens: perMinute, at: t }
      buckets.set(id, b)
    }
    b.tokens = Math.min(perMinute, b.tokens + (t - b.at) * rate)
    b.at = t
    if (b.tokens >= 1) {
      b.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000))
  }
}

// A bucket idle for a minute has refilled completely, so dropping it is the same as keeping it.
function sweep(buckets: Map<string, Bucket>, t: number) {
  for (const [k, b] of buckets) if (t - b.at >= 60_000) buckets.delete(k)
}
