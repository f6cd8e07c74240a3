import type { RequestContext } from '../identity/context'
import type { Principal } from '../identity/service'
import { admissionFor, authenticate, describeRequirement, permissionsOf, readCookie, SESSION_COOKIE, type Admission, type AuthRequirement } from './auth'
import type { RequestBudgets } from './budgets'
import type { AppDeps } from './deps'
import { awaited, syncMerging } from './hook-kinds'
import { requestContext, stateOf, type RequestState } from './request-state'

const SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }, { sessionCookie: [] }]

/** `optionalAuth`: a requirement (the principal when a credential is presented, which must then meet it; null when
 *  none is), or the object form. `when` decides from the body instead: requests it accepts must authenticate, the
 *  others are anonymous whatever they present. `onFailure: 'anonymous'` answers a credential that fails to
 *  authenticate as if none had been presented. */
export type OptionalAuth = AuthRequirement | { requirement: AuthRequirement; when?: (body: unknown) => boolean; onFailure?: 'refuse' | 'anonymous' }

type Hooked = { request: Request; body?: unknown }
/** What a handler receives: the principal, and the request context every service call is given (the request's
 *  own RequestState, so no object is built for it). */
type Resolved<P extends Principal | null> = { principal: P; ctx: RequestContext<P> }

// The principal and context reach the handler as the transform's return value, which Elysia merges into the
// context; a resolve hook would cost every authenticated request a second hook. REQUIRED, OPTIONAL and
// ANONYMOUS_ONLY stand in for that resolve in the types only.
const REQUIRED = undefined as unknown as () => Resolved<Principal>
const OPTIONAL = undefined as unknown as () => Resolved<Principal | null>
const ANONYMOUS_ONLY = undefined as unknown as () => { ctx: RequestContext<null> }
const anonymousIn = (st: RequestState): Resolved<null> => ({ principal: null, ctx: st as RequestContext<null> })
const admittedIn = (st: RequestState): Resolved<Principal> => ({ principal: st.principal!, ctx: st as RequestContext<Principal> })

const presented = (request: Request): boolean =>
  request.headers.has('authorization') || readCookie(request.headers.get('cookie'), SESSION_COOKIE) !== undefined

/** The `auth`, `optionalAuth` and `public` macros: who the caller is, and which request budget they spend. */
export function authMacros(deps: AppDeps, budgets: RequestBudgets) {
  // Synchronous for a PAT in this replica's cache; a promise only when a lookup is needed.
  function signIn(st: RequestState, request: Request, admission: Admission, failed: (err: unknown) => Resolved<null>) {
    let resolved: ReturnType<typeof authenticate>
    try {
      resolved = authenticate(deps, request, admission)
    } catch (err) {
      return failed(err)
    }
    if (resolved instanceof Promise) return resolved.then((p) => admit(st, p), failed)
    return admit(st, resolved)
  }

  // Synchronous while the replica holds a lease of the caller's budgets; a promise when one is renewed.
  function admit(st: RequestState, p: Principal): Resolved<Principal> | Promise<Resolved<Principal>> {
    requestContext(st, p)
    const spent = budgets.admitted(st, p)
    return spent ? spent.then(() => admittedIn(st)) : admittedIn(st)
  }

  return {
    public: (on: boolean) => ({
      detail: { security: [] },
      ...(on ? {
        transform: syncMerging(({ request }: Hooked) => {
          const st = stateOf(request)
          budgets.anonymous(st)
          return { ctx: st as RequestContext<null> }
        }),
        resolve: ANONYMOUS_ONLY,
      } : {}),
    }),
    auth: (requirement: AuthRequirement) => {
      const admission = admissionFor(requirement)
      return {
        detail: { security: SECURITY, 'x-permissions': permissionsOf(requirement), description: describeRequirement(requirement) },
        transform: awaited(({ request }: Hooked) => {
          const st = stateOf(request)
          return signIn(st, request, admission, (err) => { throw budgets.refused(st, err) })
        }),
        resolve: REQUIRED,
      }
    },
    optionalAuth: (option: OptionalAuth) => {
      const { requirement, when, onFailure } = typeof option === 'object' && 'requirement' in option ? option : { requirement: option }
      const admission = admissionFor(requirement)
      const anonymous = (st: RequestState) => {
        budgets.anonymous(st)
        return anonymousIn(st)
      }
      return {
        detail: {
          security: [{}, ...SECURITY], 'x-permissions': permissionsOf(requirement),
          description: `Credential optional. ${describeRequirement(requirement)}`,
        },
        transform: awaited(({ request, body }: Hooked) => {
          const st = stateOf(request)
          if (!(when ? when(body) : presented(request))) return anonymous(st)
          return signIn(st, request, admission, (err) => {
            if (onFailure === 'anonymous') return anonymous(st)
            throw budgets.refused(st, err)
          })
        }),
        resolve: OPTIONAL,
      }
    },
  }
}
