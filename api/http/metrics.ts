import type { Server } from 'bun'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { CredentialCache } from '../credentials/cache'
import { processRegistry } from '../platform/metrics'
import { stateOf } from './request-state'

// Seconds; sign-in's argon2 lands in the 0.1–0.5 buckets, a cached PAT read in the first few.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
// A client may send any token as a method; anything else is counted as one "other".
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** The API's metrics (docs/operations.md "Metrics"). Labels are bounded by construction: a route is its template
 *  (`/v1/webhook-endpoints/:endpointId`, never the id), a reason or budget is one of a fixed set of codes; no label
 *  carries a tenant, user, token or URL. Counts that already exist elsewhere (the PAT cache's, the server's pending
 *  requests) are read at scrape time instead of being counted twice on the hot path. */
export function createApiMetrics(registry: Registry = processRegistry('api')) {
  const requests = new Histogram({
    name: 'rcp_http_request_duration_seconds',
    help: 'Time from arrival to response, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  })
  const rateLimited = new Counter({
    name: 'rcp_rate_limit_refusals_total',
    help: 'Requests refused 429 by a request budget, by budget (ip, user, tenant) or sign-in throttle',
    labelNames: ['budget'] as const,
    registers: [registry],
  })
  const authFailures = new Counter({
    name: 'rcp_auth_failures_total',
    help: 'Requests refused for their credential, by problem code',
    labelNames: ['reason'] as const,
    registers: [registry],
  })
  const idempotency = new Counter({
    name: 'rcp_idempotency_outcomes_total',
    help: 'Requests with an Idempotency-Key answered from the store: replayed, or refused as a conflict',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  let server: Server<unknown> | null = null
  new Gauge({
    name: 'rcp_http_requests_in_flight',
    help: 'Requests the server has accepted and not yet answered',
    registers: [registry],
    collect() {
      this.set(server?.pendingRequests ?? 0)
    },
  })
  const caches: CredentialCache<unknown>[] = []
  new Counter({
    name: 'rcp_pat_cache_lookups_total',
    help: 'Personal access token lookups in the process cache, by result (hit, miss)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const c of caches) {
        this.inc({ result: 'hit' }, c.stats.hits)
        this.inc({ result: 'miss' }, c.stats.misses)
      }
    },
  })
  let auditSealLag: (() => Promise<number>) | null = null
  new Gauge({
    name: 'rcp_audit_seal_lag_seconds',
    help: 'How long the oldest audit entry waiting to be sealed has waited (0 when none)',
    registers: [registry],
    async collect() {
      this.set(auditSealLag ? await auditSealLag() : 0)
    },
  })
  return {
    registry,
    /** Where the audit seal lag gauge reads at scrape time (one indexed query). */
    watchAuditSealing(lag: () => Promise<number>) {
      auditSealLag = lag
    },
    /** The listening server, for the in-flight gauge. */
    attach(started: Server<unknown> | null) {
      server = started
    },
    watchCache(cache: CredentialCache<unknown>) {
      caches.push(cache)
    },
    rateLimited(budget: string) {
      rateLimited.inc({ budget })
    },
    authFailed(reason: string) {
      authFailures.inc({ reason })
    },
    idempotency(outcome: 'replayed' | 'conflict') {
      idempotency.inc({ outcome })
    },
    /** The after-response hook; `route` is Elysia's registered path, absent when no route matched. */
    observe({ request, route, set }: { request: Request; route?: string; set: { status?: number | string } }): void {
      const st = stateOf(request)
      requests.observe(
        { route: route || 'unmatched', method: METHODS.has(request.method) ? request.method : 'other', status: String(set.status ?? 200) },
        (performance.now() - st.startedAt) / 1000,
      )
    },
  }
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>
