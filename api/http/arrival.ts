import type { Server } from 'bun'
import http from 'node:http'
import type { Config } from '../platform/config'
import type { DatabaseCircuit } from './database-circuit'
import { problemResponse } from './problem'
import { DATABASE_UNAVAILABLE } from './problem-mapping'
import { initState } from './request-state'

type Arrival = { request: Request; set: { headers: Record<string, unknown>; status?: number | string } }

/** The request target (path and query) a request may have; longer is 431 with a problem body. */
export const MAX_TARGET_BYTES = 16 * 1024
/** Bun's own limit on the request line and headers together, past which it answers a bare 431 and closes the
 *  connection before any hook runs. It sits above ours (Bun's default, 16 KiB, would hide our answer); it is a
 *  process-wide setting, read by every server started after it is raised. */
export const BUN_HEADER_LIMIT_BYTES = 64 * 1024
export function raiseBunHeaderLimit(): void {
  if (http.maxHeaderSize < BUN_HEADER_LIMIT_BYTES) (http as { maxHeaderSize: number }).maxHeaderSize = BUN_HEADER_LIMIT_BYTES
}

/** The one route whose body is not JSON: a model version's object, streamed to storage (api/model-versions). */
const OBJECT_UPLOAD = /^\/v1\/model-versions\/[^/?]+\/object-content(\?|$)/
const isObjectUpload = (url: string) => OBJECT_UPLOAD.test(url.slice(url.indexOf('/', 8)))

/** The one hook every request pays for, so it does only what every response needs: its request id (echoed on
 *  every response, errors included), the refusal of an overlong target, of any request while the database is known
 *  away (the circuit is a field compare otherwise) and of a declared body over the limit before any byte is read;
 *  the arrival time only when the access log (`timed`) will report it.
 *  It never returns a promise. Elysia awaits a hook whose source reads `return f(` (a cost on every request, not an
 *  error), so the refusal is returned from a variable that the transpiler cannot fold into the call. */
export function arrivalHook(
  config: Pick<Config, 'MAX_BODY_BYTES' | 'MODEL_UPLOAD_MAX_BYTES'>,
  serverOf: () => Server<unknown> | null,
  timed: boolean,
  database: DatabaseCircuit,
) {
  const max = config.MAX_BODY_BYTES
  const uploadMax = config.MODEL_UPLOAD_MAX_BYTES
  return function arrive({ request, set }: Arrival): Response | undefined {
    const st = initState(request, serverOf())
    if (timed) st.startedAt = performance.now()
    set.headers['x-request-id'] = st.requestId
    let refusal: Response | undefined
    // Only the target is measured: summing every header would cost each request a walk over them all.
    const url = request.url
    if (url.length - url.indexOf('/', 8) > MAX_TARGET_BYTES) {
      set.status = 431
      refusal = problemResponse({
        status: 431,
        code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
        message: `The request target exceeds ${MAX_TARGET_BYTES} bytes`,
        requestId: st.requestId,
      })
    } else if (database.open && !url.includes('/healthz')) {
      // the process's own health stays answerable: it needs no database
      const { status, code, message, extra } = DATABASE_UNAVAILABLE
      set.status = status
      refusal = problemResponse({ status, code, message, requestId: st.requestId, headers: extra.headers })
    } else {
      const length = request.headers.get('content-length')
      // An object upload streams its body on to storage, within its own limit (checked again by its service).
      const limit = length === null || !(Number(length) > max) ? undefined : request.method === 'PUT' && isObjectUpload(url) ? uploadMax : max
      if (limit !== undefined && Number(length) > limit) {
        set.status = 400
        refusal = problemResponse({ status: 400, code: 'BAD_REQUEST', message: `Request body exceeds ${limit} bytes`, requestId: st.requestId })
      }
    }
    return refusal
  }
}
