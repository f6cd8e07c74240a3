import type { Principal } from '../identity/service'
import { ApiError, rateLimited, type RateBudget } from '../platform/errors'
import type { Admission } from '../rate-budgets/service'
import type { HttpDeps } from './deps'
import type { RequestState } from './request-state'

const WINDOW_SECONDS = 60

/** The request budgets (docs/api.md "Rate budgets"): an anonymous caller spends its address's, a signed-in one its own
 *  and its tenant's. The signed-in budgets are shared by every replica when `sharedBudgets` is set; an address's is
 *  the replica's own. */
export function requestBudgets(deps: Pick<HttpDeps, 'config' | 'limiter' | 'sharedBudgets' | 'requestTally'>) {
  const { config, limiter, sharedBudgets, requestTally } = deps
  const refuse = (kind: RateBudget, perMinute: number, retryAfter: number) => {
    if (retryAfter > 0) throw rateLimited('Request budget exceeded', { budget: kind, limit: perMinute, windowSeconds: WINDOW_SECONDS, retryAfter })
  }
  const spend = (kind: RateBudget, id: string, perMinute: number) => refuse(kind, perMinute, limiter.admit(kind, id, perMinute))
  const admit = (kind: RateBudget, id: string, perMinute: number): Admission =>
    sharedBudgets ? sharedBudgets.admit(kind, id, perMinute) : limiter.admit(kind, id, perMinute)
  /** The tenant's budget after the user's; a promise only if a lease had to be renewed. */
  const tenant = (p: Principal): void | Promise<void> => {
    if (!p.membership) return
    const perMinute = config.RATE_LIMIT_TENANT_PER_MINUTE
    const tenantId = p.membership.tenantId
    const spent = admit('tenant', tenantId, perMinute)
    // An admitted request is metered where it spends its tenant's budget (usage: API requests by credential class).
    if (typeof spent === 'number') {
      refuse('tenant', perMinute, spent)
      requestTally.count(tenantId, p.credential)
      return
    }
    return spent.then((retryAfter) => {
      refuse('tenant', perMinute, retryAfter)
      requestTally.count(tenantId, p.credential)
    })
  }
  const anonymous = (st: RequestState): void => spend('ip', st.ip, config.RATE_LIMIT_ANONYMOUS_PER_MINUTE)
  return {
    anonymous,
    /** Failed credentials spend the caller's anonymous budget, so guessing is throttled too. */
    refused(st: RequestState, err: unknown): unknown {
      if (err instanceof ApiError && err.status === 401) anonymous(st)
      return err
    },
    /** Spends the caller's and its tenant's budgets (throws RATE_LIMITED); a promise only if a lease was renewed. */
    admitted(p: Principal): void | Promise<void> {
      const perMinute = config.RATE_LIMIT_PRINCIPAL_PER_MINUTE
      const spent = admit('user', p.userId, perMinute)
      if (typeof spent !== 'number')
        return spent.then((retryAfter) => {
          refuse('user', perMinute, retryAfter)
          return tenant(p)
        })
      refuse('user', perMinute, spent)
      return tenant(p)
    },
  }
}

export type RequestBudgets = ReturnType<typeof requestBudgets>
