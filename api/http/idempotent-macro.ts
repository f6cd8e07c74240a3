import { ApiError } from '../platform/errors'
import type { HttpDeps } from './deps'
import { claimKey, completeKey } from '../idempotency/queries'
import { IDEMPOTENCY_HEADER, idempotencyScope, parseIdempotencyKey, replayResponse, requestHash, sealResponse } from './idempotency'
import { stateOf } from './request-state'

type SetContext = { headers: Record<string, unknown>; status?: number | string }

/** The Response Elysia would have produced, built here because its bytes have to be stored. */
function toResponse(value: unknown, set: SetContext): Response {
  if (value instanceof Response) return value
  const headers = new Headers()
  for (const [k, v] of Object.entries(set.headers)) {
    if (Array.isArray(v)) for (const one of v) headers.append(k, String(one))
    else if (v !== undefined) headers.set(k, String(v))
    // Elysia merges set.headers into the returned Response again; appended ones would double.
    delete set.headers[k]
  }
  const status = typeof set.status === 'number' ? set.status : 200
  if (value === undefined || status === 204) return new Response(null, { status: 204, headers })
  headers.set('content-type', 'application/json')
  return new Response(JSON.stringify(value), { status, headers })
}

const keyParameter = (scope: string) =>
  ({
    in: 'header',
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    description: `Unique per ${scope} for 24 hours; a repeat with the same body replays the first response.`,
  }) as const
const KEY_PARAMETERS = { tenant: [keyParameter('tenant (per user without a tenant; per operation when public)')], user: [keyParameter('calling user')] }

/** `idempotent`: a request with an Idempotency-Key claims it before the handler runs, and its exact response is
 *  stored before it is sent; a repeat replays that. 'user' scopes keys to the caller instead of the tenant, for
 *  operations on the caller's own account (two members reusing a key never see each other's answer). Only these routes pay for the response hook. */
export function idempotentMacro(deps: Pick<HttpDeps, 'sql' | 'config' | 'keys' | 'metrics'>) {
  const { config } = deps
  const storeAndSend = async (scope: string, key: string, res: Response): Promise<Response> => {
    const { status, sealed } = await sealResponse(deps.keys, res)
    await completeKey(deps.sql, { scope, key, status, sealed })
    return res
  }
  return (on: boolean | 'user') =>
    on
      ? {
          detail: { parameters: on === 'user' ? KEY_PARAMETERS.user : KEY_PARAMETERS.tenant },
          transform({ request }: { request: Request }) {
            const key = parseIdempotencyKey(request.headers.get(IDEMPOTENCY_HEADER))
            if (key) stateOf(request).idempotency = { key }
          },
          async beforeHandle({ request, body, route, set }: { request: Request; body: unknown; route: string; set: SetContext }) {
            const st = stateOf(request)
            const idem = st.idempotency
            if (!idem) return
            idem.scope = idempotencyScope(st.principal, `${request.method} ${route}`, on === 'user')
            const result = await claimKey(deps.sql, {
              scope: idem.scope,
              key: idem.key,
              requestHash: requestHash(request.method, new URL(request.url).pathname, body),
              ttlHours: config.IDEMPOTENCY_TTL_HOURS,
              lockSeconds: config.IDEMPOTENCY_LOCK_SECONDS,
            })
            if (result.kind === 'claimed') {
              idem.owned = true
              return
            }
            if (result.kind === 'conflict') {
              throw new ApiError(
                'IDEMPOTENCY_CONFLICT',
                result.reason === 'in_flight'
                  ? 'A request with this Idempotency-Key is still being processed'
                  : 'This Idempotency-Key was already used with a different request',
              )
            }
            idem.replayed = true
            deps.metrics.idempotency('replayed')
            const replay = replayResponse(deps.keys, result.sealed, st.requestId)
            set.status = replay.status
            return replay
          },
          // Runs for errors too, so a failure is stored and replayed like any other answer.
          async mapResponse({ request, responseValue, set }: { request: Request; responseValue: unknown; set: SetContext }) {
            const idem = stateOf(request).idempotency
            if (!idem?.owned || !idem.scope) return
            idem.owned = false
            return storeAndSend(idem.scope, idem.key, toResponse(responseValue, set))
          },
        }
      : {}
}
