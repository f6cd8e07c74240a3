// The activities' container, in a module of its own: every activity file names it, and activities/index.ts imports
// every activity file, so declaring it there would make each of them a circle with the index.
import type { ServiceDeps } from '../api/platform/deps'
import type { Resolver } from '../api/platform/outbound/policy'
import type { ActivityMetrics } from './metrics'

/** The services' own container (api/compose.ts builds it; the worker adds its metrics), so an activity hands a domain service
 *  exactly what the API would. */
export interface ActivityDeps extends ServiceDeps {
  /** What the activities report to the worker's metrics (worker/metrics.ts). */
  activityMetrics: ActivityMetrics
  /** Name resolution for outbound requests; the system's unless a test injects one (DNS rebinding). */
  resolve?: Resolver
}
