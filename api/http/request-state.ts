import type { Principal } from '../identity/service'

/** What the convention hooks learn about one request, keyed by the Request object itself so that every hook
 *  (including onError, which runs before any derive when parsing fails) sees the same state. */
export interface RequestState {
  requestId: string
  startedAt: number
  ip: string
  allowedCodes?: Set<string>
  principal?: Principal
  idempotency?: { key: string; scope?: string; owned?: boolean; replayed?: boolean }
}

const states = new WeakMap<Request, RequestState>()

export function initState(request: Request, ip: string): RequestState {
  const inbound = request.headers.get('x-request-id')
  // Echo a caller's id only when it is short and plain, so it cannot smuggle text into logs or headers.
  const requestId = inbound && /^[A-Za-z0-9._:-]{1,128}$/.test(inbound) ? inbound : crypto.randomUUID()
  const st: RequestState = { requestId, startedAt: performance.now(), ip }
  states.set(request, st)
  return st
}

export const stateOf = (request: Request): RequestState => states.get(request) ?? initState(request, 'unknown')
