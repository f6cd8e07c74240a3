// Retries of refused attempts: 429 (the API's budgets) and 503 (its database or Temporal away) only. Every other
// answer, and a network failure, goes straight back to the caller: a 500 or a lost connection may have done the work.

export interface RetryPolicy {
  /** Attempts after the first (default 4). */
  retries: number
  /** The first backoff when the answer names no Retry-After (default 250 ms), doubled each attempt, full jitter. */
  baseDelayMs: number
  /** The longest wait the client accepts; a Retry-After beyond it ends the retries (default 60 s). */
  maxDelayMs: number
  /** How the client waits: tests pass a recorder. */
  sleep: (ms: number) => Promise<unknown>
}

export const defaultRetryPolicy: RetryPolicy = {
  retries: 4,
  baseDelayMs: 250,
  maxDelayMs: 60_000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

/** Whether this answer may be asked again. A 429 is refused before any work, so always. A 503 only when repeating
 *  cannot double the work: a method that is idempotent by HTTP's rules, or a request carrying an Idempotency-Key
 *  (the API then answers the first effect). An answer the API replayed from its idempotency store is final. */
export function retryable(request: Request, response: Response): boolean {
  if (response.headers.get('idempotent-replayed') === 'true') return false
  if (response.status === 429) return true
  if (response.status !== 503) return false
  return SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key')
}

/** A fetch that repeats a refused request, each attempt a clone of the first (same headers, so the same
 *  Idempotency-Key), waiting what Retry-After says or a jittered exponential backoff. */
export function retryingFetch(fetcher: (request: Request) => Promise<Response>, policy: RetryPolicy): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetcher(request.clone())
      if (attempt >= policy.retries || !retryable(request, response)) return response
      const named = retryAfterMs(response.headers.get('retry-after'))
      const delay = named ?? Math.random() * policy.baseDelayMs * 2 ** attempt
      if (delay > policy.maxDelayMs) return response
      await response.body?.cancel()
      await policy.sleep(delay)
    }
  }
}
