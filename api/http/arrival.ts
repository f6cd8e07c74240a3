import type { Server } from 'bun'
import type { Config } from '../platform/config'
import { problemResponse } from './problem'
import { initState } from './request-state'

type Arrival = { request: Request; set: { headers: Record<string, unknown>; status?: number | string } }

/** The one hook every request pays for, so it does only what every response needs: its request id (echoed on
 *  every response, errors included) and the refusal of a declared body over the limit before any byte is read;
 *  the arrival time only when the access log (`timed`) will report it.
 *  Elysia reads a hook's source to decide whether to await it (`return f(` counts as async), and an awaited
 *  request hook makes every request wait a microtask: hence the named local before each return. */
export function arrivalHook(config: Pick<Config, 'MAX_BODY_BYTES'>, serverOf: () => Server<unknown> | null, timed: boolean) {
  const max = config.MAX_BODY_BYTES
  return function arrive({ request, set }: Arrival): Response | undefined {
    const st = initState(request, serverOf())
    if (timed) st.startedAt = performance.now()
    set.headers['x-request-id'] = st.requestId
    const length = request.headers.get('content-length')
    if (length === null || !(Number(length) > max)) return undefined
    set.status = 400
    const refusal = problemResponse({ status: 400, code: 'BAD_REQUEST', message: `Request body exceeds ${max} bytes`, requestId: st.requestId })
    return refusal
  }
}
