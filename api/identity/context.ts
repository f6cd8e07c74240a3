import { requireActiveMembership, type Membership, type Principal } from './service'

/** Who is acting, in which tenant and from where, for one service call. The HTTP layer builds it once per request
 *  (the auth macros, from the credential they resolved: requestContext in api/http/request-state.ts); the request's
 *  own state object is it, so no second object is made. Services take it second, after deps, and pass it on; the
 *  audit trail and the services' log lines read it, and nothing re-derives what it holds. */
export interface RequestContext<P extends Principal | null = Principal> {
  readonly principal: P
  /** The caller's current tenant membership, checked usable (active, not expired) once as the request was admitted;
   *  null for an anonymous caller and for one with no usable membership. Read it with tenantOf. */
  readonly membership: Membership | null
  /** The client address as the server saw it. */
  readonly ip: string | null
  readonly userAgent: string | null
  readonly requestId: string | null
  /** The trace of the request's span when the process traces (README "Traces"); null when it does not. */
  readonly traceId: string | null
  readonly system: null
}

/** What an activity acts as: the platform, named by its workflow (a schedule, the dispatcher, a build). Not a
 *  request: no principal, no client, no request id. */
export interface ActivityContext {
  readonly principal: null
  readonly membership: null
  readonly ip: null
  readonly userAgent: null
  readonly requestId: null
  readonly traceId: null
  readonly system: { readonly workflowId: string }
}

/** Any of them: what an audited change accepts. */
export type ActingContext = RequestContext<Principal | null> | ActivityContext

export const activityContext = (workflowId: string): ActivityContext =>
  Object.freeze({ principal: null, membership: null, ip: null, userAgent: null, requestId: null, traceId: null, system: Object.freeze({ workflowId }) })

/** A copy of a request's context that outlives it: work a handler leaves running after it answered (a mail sent in
 *  the background) reads the facts from here, not from a request that is gone by then. */
export const detachedContext = <P extends Principal | null>(ctx: RequestContext<P>): RequestContext<P> =>
  Object.freeze({
    principal: ctx.principal,
    membership: ctx.membership,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    requestId: ctx.requestId,
    traceId: ctx.traceId,
    system: null,
  })

/** The one way a service reads its tenant: the membership the context was admitted with. A caller without a usable
 *  one is refused with the reason (disabled, expired, none), as the auth macro refuses it on a route that requires a
 *  permission; a service reached by another route stays safe on its own. */
export const tenantOf = (ctx: RequestContext): Membership => ctx.membership ?? requireActiveMembership(ctx.principal, undefined)

/** The fields a log line about this context's work carries: the request's id and trace, keyed as the access log
 *  keys them (one search finds the request's line and its services' lines), or the acting workflow. */
export function logIds(ctx: ActingContext): Record<string, string> {
  if (ctx.system) return { workflowId: ctx.system.workflowId }
  const ids: Record<string, string> = {}
  if (ctx.requestId !== null) ids.requestId = ctx.requestId
  if (ctx.traceId !== null) ids.trace_id = ctx.traceId
  return ids
}
