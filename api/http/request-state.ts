import type { Principal } from '../identity/service'

/** What the convention hooks learn about one request. It hangs off the Request object itself, so every hook
 *  (including onError, which runs before any derive when parsing fails) sees the same state. */
export interface RequestState {
  requestId: string
  startedAt: number
  /** The client address, looked up only by the routes that need it (rate budgets, session records). */
  readonly ip: string
  allowedCodes?: Set<string>
  principal?: Principal
  idempotency?: { key: string; scope?: string; owned?: boolean; replayed?: boolean }
}

const STATE = Symbol('rcp.requestState')
type WithState = Request & { [STATE]?: RequestState }

export function initState(request: Request, lookupIp: () => string = () => 'unknown'): RequestState {
  const inbound = request.headers.get('x-request-id')
  // Echo a caller's id only when it is short and plain, so it cannot smuggle text into logs or headers.
  const requestId = inbound && /^[A-Za-z0-9._:-]{1,128}$/.test(inbound) ? inbound : crypto.randomUUID()
  let ip: string | undefined
  const st: RequestState = {
    requestId,
    startedAt: performance.now(),
    get ip() {
      return (ip ??= lookupIp())
    },
  }
  ;(request as WithState)[STATE] = st
  return st
}

export const stateOf = (request: Request): RequestState => (request as WithState)[STATE] ?? initState(request)
