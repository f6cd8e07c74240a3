import type { Server } from 'bun'
import type { RequestContext } from '../identity/context'
import type { Principal } from '../identity/service'

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** What the convention hooks learn about one request. It hangs off the Request object itself, so every hook
 *  (including onError, which runs before any derive when parsing fails) sees the same state. A class rather than
 *  a literal with a getter: one shape for every request, and no closure built per request. It is also the
 *  request's RequestContext, which the auth macros hand to the handler as `ctx`: no second object per request. */
export class RequestState implements RequestContext<Principal | null> {
  /** performance.now() on arrival; set only when the access log will report the duration. */
  startedAt = 0
  allowedCodes?: Set<string>
  principal: Principal | null = null
  readonly system = null
  idempotency?: { key: string; scope?: string; owned?: boolean; replayed?: boolean }
  private address?: string
  private agent?: string | null

  constructor(readonly requestId: string, private readonly request: Request, private readonly server: Server<unknown> | null) {}

  /** The client address, looked up only by the routes that need it (rate budgets, session records). */
  get ip(): string {
    return (this.address ??= this.server?.requestIP(this.request)?.address ?? 'unknown')
  }

  get userAgent(): string | null {
    if (this.agent === undefined) this.agent = this.request.headers.get('user-agent')?.slice(0, 512) ?? null
    return this.agent
  }
}

/** The context of a request the auth macros admitted: its principal, for every service the handler calls. The
 *  request's own state, so no object is built for it. */
export function requestContext(st: RequestState, principal: Principal): RequestContext<Principal> {
  st.principal = principal
  return st as RequestContext<Principal>
}

const STATE = Symbol('rcp.requestState')
type WithState = Request & { [STATE]?: RequestState }

export function initState(request: Request, server: Server<unknown> | null = null): RequestState {
  const inbound = request.headers.get('x-request-id')
  // Echo a caller's id only when it is short and plain, so it cannot smuggle text into logs or headers.
  const requestId = inbound !== null && SAFE_REQUEST_ID.test(inbound) ? inbound : crypto.randomUUID()
  const st = new RequestState(requestId, request, server)
  ;(request as WithState)[STATE] = st
  return st
}

export const stateOf = (request: Request): RequestState => (request as WithState)[STATE] ?? initState(request)
