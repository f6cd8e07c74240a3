import type { Principal } from '../identity/service'
import { ApiError, rateLimited, type RateBudget } from '../platform/errors'
import type { AppDeps } from './deps'
import type { RequestState } from './request-state'

const WINDOW_SECONDS = 60

/** The request budgets (README "Rate budgets"): an anonymous caller spends its address's, a signed-in one its own
 *  and its tenant's. */
export function requestBudgets(deps: Pick<AppDeps, 'config' | 'limiter'>) {
  const { config, limiter } = deps
  const spend = (kind: RateBudget, id: string, perMinute: number) => {
    const retryAfter = limiter.admit(kind, id, perMinute)
    if (retryAfter > 0) throw rateLimited('Request budget exceeded', { budget: kind, limit: perMinute, windowSeconds: WINDOW_SECONDS, retryAfter })
  }
  const anonymous = (st: RequestState): void => spend('ip', st.ip, config.RATE_LIMIT_ANONYMOUS_PER_MINUTE)
  return {
    anonymous,
    /** Failed credentials spend the caller's anonymous budget, so guessing is throttled too. */
    refused(st: RequestState, err: unknown): unknown {
      if (err instanceof ApiError && err.status === 401) anonymous(st)
      return err
    },
    admitted(st: RequestState, p: Principal): Principal {
      st.principal = p
      spend('user', p.userId, config.RATE_LIMIT_PRINCIPAL_PER_MINUTE)
      if (p.membership) spend('tenant', p.membership.tenantId, config.RATE_LIMIT_TENANT_PER_MINUTE)
      return p
    },
  }
}

export type RequestBudgets = ReturnType<typeof requestBudgets>
