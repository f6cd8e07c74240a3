import type { ResolveDeps } from '../credentials/service'
import type { Sql } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import type { SharedBudgets } from '../rate-budgets/service'
import type { RequestTally } from '../rate-budgets/request-tally'
import type { DatabaseCircuit } from './database-circuit'
import type { ApiMetrics } from './metrics'
import type { RateLimiter } from './rate-limit'

/** What the conventions plugin reads from the process's dependencies, and nothing more: the composition root
 *  (api/compose.ts) builds them, with everything else the domains need, as AppDeps. */
export interface HttpDeps extends Pick<ServiceDeps, 'config' | 'log' | 'sql' | 'keys'>, ResolveDeps {
  sql: Sql
  limiter: RateLimiter
  /** The signed-in budgets every replica shares (RATE_BUDGETS_SHARED); null keeps them per replica. */
  sharedBudgets: SharedBudgets | null
  /** The process's Prometheus metrics (served by api/main.ts on its own listener). */
  metrics: ApiMetrics
  /** Admitted requests by tenant and credential class, written as usage events in batches; start() and stop() with the process. */
  requestTally: RequestTally
  /** Tripped by a request that found the database unavailable; requests are refused on arrival while it is open. */
  databaseCircuit: DatabaseCircuit
}
