import type { Principal } from './service'

/** Who is acting and from where, for one service call. The HTTP layer builds it once per request (the auth
 *  plugin, from the credential it resolved); workflows and the worker act as the system with their workflow id.
 *  Services take it second, after deps, and pass it on; the audit trail reads it, and nothing re-derives it. */
export interface RequestContext<P extends Principal | null = Principal> {
  readonly principal: P
  /** The client address as the server saw it. */
  readonly ip: string | null
  readonly userAgent: string | null
  readonly requestId: string | null
  readonly system: null
}

/** What an activity acts as: the platform, named by its workflow (a schedule, the dispatcher, a build). Not a
 *  request, and named apart from one. */
export interface ActivityContext {
  readonly principal: null
  readonly ip: null
  readonly userAgent: null
  readonly requestId: null
  readonly system: { readonly workflowId: string }
}

/** Any of them: what an audited change accepts. */
export type ActingContext = RequestContext<Principal> | RequestContext<null> | ActivityContext

export const activityContext = (workflowId: string): ActivityContext =>
  Object.freeze({ principal: null, ip: null, userAgent: null, requestId: null, system: Object.freeze({ workflowId }) })

/** A copy of a request's context that outlives it: work a handler leaves running after it answered (a mail sent in
 *  the background) reads the facts from here, not from a request that is gone by then. */
export const detachedContext = <P extends Principal | null>(ctx: RequestContext<P>): RequestContext<P> =>
  Object.freeze({ principal: ctx.principal, ip: ctx.ip, userAgent: ctx.userAgent, requestId: ctx.requestId, system: null })
