import type { Span } from '@opentelemetry/api'
import type { Server } from 'bun'
import type { RequestContext } from '../identity/context'
import { usableMembership, type Membership, type Principal } from '../identity/service'

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
  membership: Membership | null = null
  readonly system = null
  idempotency?: { key: string; scope?: string; owned?: boolean; replayed?: boolean }
  private address?: string
  private agent?: string | null

  constructor(
    readonly requestId: string,
    private readonly request: Request,
    private readonly server: Server<unknown> | null,
  ) {}

  /** The client address, looked up only by the routes that need it (rate budgets, session records). */
  get ip(): string {
    return (this.address ??= this.server?.requestIP(this.request)?.address ?? 'unknown')
  }

  get userAgent(): string | null {
    if (this.agent === undefined) this.agent = this.request.headers.get('user-agent')?.slice(0, 512) ?? null
    return this.agent
  }

  /** Read only by what records it (an audit entry, a log line): an untraced process has no span, and a traced
   *  request pays nothing for it until then. */
  get traceId(): string | null {
    return spanOf(this.request)?.spanContext().traceId ?? null
  }
}

/** The context of a request the auth macros admitted: its principal, and its tenant resolved once for every
 *  service the handler calls. */
export function requestContext(st: RequestState, principal: Principal): RequestContext<Principal> {
  st.principal = principal
  st.membership = usableMembership(principal)
  return st as RequestContext<Principal>
}

// The request's span (api/http/request-span.ts) hangs off the Request too, made before the state is: the span wraps
// the whole handler, the arrival hook included.
const SPAN = Symbol('rcp.requestSpan')
type WithSpan = Request & { [SPAN]?: Span }

/** The request's span, when the process traces. */
export const spanOf = (request: Request): Span | undefined => (request as WithSpan)[SPAN]
export const attachSpan = (request: Request, span: Span): void => {
  ;(request as WithSpan)[SPAN] = span
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
