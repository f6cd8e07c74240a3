import type { RequestContext } from '../identity/context'
import type { Principal } from '../identity/service'
import { admissionFor, authenticate, describeRequirement, permissionsOf, readCookie, SESSION_COOKIE, type AuthRequirement } from './auth'
import type { RequestBudgets } from './budgets'
import type { HttpDeps } from './deps'
import type { RouteTable } from './method-index'
import { gateNewWork } from './new-work'
import { requestContext, stateOf, type RequestState } from './request-state'

const SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }, { sessionCookie: [] }]

/** `optionalAuth`: a requirement (the principal when a credential is presented, which must then meet it; null when
 *  none is), or the object form. `when` decides from the body instead: requests it accepts must authenticate, the
 *  others are anonymous whatever they present. `onFailure: 'anonymous'` answers a credential that fails to
 *  authenticate as if none had been presented. */
export type OptionalAuth = AuthRequirement | { requirement: AuthRequirement; when?: (body: unknown) => boolean; onFailure?: 'refuse' | 'anonymous' }

type Hooked = { request: Request; body?: unknown; route?: string }

// Each macro splits its work over two documented hooks. The transform authenticates and spends the budgets, before
// validation, as the credential is checked before the body; it writes what it learnt into the request's state. The
// resolve hands that to the handler as `principal` and `ctx` (what Elysia's types give the handler come from it).
// Whether a hook may return a promise is never left to Elysia's reading of its source: the transforms that may wait
// are `async`, the others and the resolves never return a promise. Written with a local before each return, so
// that reading (which takes `return f(` for "may be a promise") keeps them synchronous: a cost, never a correctness,
// question (test/http/hook-cost.test.ts).
// The resolves also run the new-work gate (api/http/new-work.ts): by then every transform has run, so the caller is
// admitted and the operation's error sets are known.
function admittedView({ request, route }: Hooked): { principal: Principal; ctx: RequestContext<Principal> } {
  const st = stateOf(request)
  gateNewWork(request.method, route!, st.membership)
  return { principal: st.principal!, ctx: st as RequestContext<Principal> }
}
function optionalView({ request, route }: Hooked): { principal: Principal | null; ctx: RequestContext<Principal | null> } {
  const st = stateOf(request)
  gateNewWork(request.method, route!, st.membership)
  return { principal: st.principal, ctx: st as RequestContext<Principal | null> }
}
function anonymousView({ request }: Hooked): { ctx: RequestContext<null> } {
  const st = stateOf(request)
  return { ctx: st as RequestContext<null> }
}

const presented = (request: Request): boolean => request.headers.has('authorization') || readCookie(request.headers.get('cookie'), SESSION_COOKIE) !== undefined

/** The `auth`, `optionalAuth` and `public` macros: who the caller is, and which request budget they spend. */
export function authMacros(deps: HttpDeps, budgets: RequestBudgets, routes?: RouteTable) {
  // The transforms below wait only when they must: for a credential that has to be looked up (a PAT not in this
  // replica's cache, a session), and while a budget lease is renewed.
  function admit(st: RequestState, principal: Principal): void | Promise<void> {
    requestContext(st, principal)
    return budgets.admitted(principal)
  }

  return {
    public: (on: boolean) => ({
      detail: { security: [] },
      ...(on
        ? {
            transform({ request }: Hooked) {
              budgets.anonymous(stateOf(request))
            },
            resolve: anonymousView,
          }
        : {}),
    }),
    auth: (requirement: AuthRequirement) => {
      const admission = admissionFor(requirement)
      return {
        detail: { security: SECURITY, 'x-permissions': permissionsOf(requirement), description: describeRequirement(requirement) },
        async transform({ request, route }: Hooked) {
          const st = stateOf(request)
          let principal: Principal
          try {
            const resolved = authenticate(deps, request, admission, routes?.declares(request.method, route!, 'TENANT_NOT_FOUND') ?? false)
            principal = resolved instanceof Promise ? await resolved : resolved
          } catch (err) {
            throw budgets.refused(st, err)
          }
          const spent = admit(st, principal)
          if (spent) await spent
        },
        resolve: admittedView,
      }
    },
    optionalAuth: (option: OptionalAuth) => {
      const { requirement, when, onFailure } = typeof option === 'object' && 'requirement' in option ? option : { requirement: option }
      const admission = admissionFor(requirement)
      return {
        detail: {
          security: [{}, ...SECURITY],
          'x-permissions': permissionsOf(requirement),
          description: `Credential optional. ${describeRequirement(requirement)}`,
        },
        async transform({ request, body, route }: Hooked) {
          const st = stateOf(request)
          if (!(when ? when(body) : presented(request))) return budgets.anonymous(st)
          let principal: Principal
          try {
            const resolved = authenticate(deps, request, admission, routes?.declares(request.method, route!, 'TENANT_NOT_FOUND') ?? false)
            principal = resolved instanceof Promise ? await resolved : resolved
          } catch (err) {
            if (onFailure === 'anonymous') return budgets.anonymous(st)
            throw budgets.refused(st, err)
          }
          const spent = admit(st, principal)
          if (spent) await spent
        },
        resolve: optionalView,
      }
    },
  }
}
