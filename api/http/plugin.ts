import { Elysia } from 'elysia'
import { ApiError, codesOf, type ErrorSetName } from '../platform/errors'
import type { Principal } from '../identity/service'
import { authenticate, describeRequirement, permissionsOf, type AuthRequirement } from './auth'
import type { AppDeps } from './deps'
import { claimKey, completeKey } from '../idempotency/queries'
import { IDEMPOTENCY_HEADER, idempotencyScope, parseIdempotencyKey, replayResponse, requestHash, sealResponse } from './idempotency'
import { problemResponse } from './problem'
import { initState, stateOf, type RequestState } from './request-state'

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

const SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }, { sessionCookie: [] }]

function rateLimited(limit: number, retryAfter: number): ApiError {
  return new ApiError('RATE_LIMITED', `Request budget exceeded; retry in ${retryAfter} s`, {
    headers: {
      'retry-after': String(retryAfter),
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(retryAfter),
      'ratelimit-policy': `${limit};w=60`,
    },
  })
}

function validationErrors(error: unknown): { path: string; message: string }[] {
  const e = error as { all?: { path?: string; message?: string; summary?: string }[]; type?: string }
  const where = e.type ?? 'body'
  return (e.all ?? []).map((i) => {
    const p = String(i.path ?? '').replace(/^\//, '').replaceAll('/', '.')
    return { path: p ? `${where}.${p}` : where, message: i.message ?? i.summary ?? 'is invalid' }
  })
}

/** Every /v1 convention in one plugin: request ids, body limit, problem+json, envelope, error-set enforcement,
 *  and the route macros `errors`, `auth`, `public` and `idempotent`. */
const built = new WeakMap<AppDeps, ReturnType<typeof buildConventions>>()
let instances = 0

/** One plugin instance per deps, so every domain can `.use()` it for the macro types and it registers once. */
export function httpConventions(deps: AppDeps) {
  let plugin = built.get(deps)
  if (!plugin) built.set(deps, (plugin = buildConventions(deps, ++instances)))
  return plugin
}

function buildConventions(deps: AppDeps, instance: number) {
  const { config, log } = deps
  const strictErrorSets = config.NODE_ENV !== 'production'

  const storeAndSend = async (scope: string, key: string, res: Response): Promise<Response> => {
    const { status, sealed } = await sealResponse(deps.keys.idempotency, res)
    await completeKey(deps.sql, { scope, key, status, sealed })
    return res
  }

  const spend = (key: string, perMinute: number) => {
    const retryAfter = deps.limiter.admit(key, perMinute)
    if (retryAfter > 0) throw rateLimited(perMinute, retryAfter)
  }

  // Failed credentials spend the caller's anonymous budget, so guessing is throttled too.
  const refused = (st: RequestState, err: unknown): unknown => {
    if (err instanceof ApiError && err.status === 401) spend(`ip:${st.ip}`, config.RATE_LIMIT_ANONYMOUS_PER_MINUTE)
    return err
  }

  const admitted = (st: RequestState, p: Principal): void => {
    st.principal = p
    spend(`user:${p.userId}`, config.RATE_LIMIT_PRINCIPAL_PER_MINUTE)
    if (p.membership) spend(`tenant:${p.membership.tenantId}`, config.RATE_LIMIT_TENANT_PER_MINUTE)
  }

  const plugin = new Elysia({ name: 'http-conventions', seed: instance })
    .onRequest(({ request, server, set }) => {
      const st = initState(request, () => server?.requestIP(request)?.address ?? 'unknown')
      set.headers['x-request-id'] = st.requestId
      const length = Number(request.headers.get('content-length') ?? 0)
      // Refused before any byte of the body is read or parsed.
      if (length > config.MAX_BODY_BYTES) {
        return problemResponse({ status: 400, code: 'BAD_REQUEST', message: `Request body exceeds ${config.MAX_BODY_BYTES} bytes`, requestId: st.requestId })
      }
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const text = await request.text()
      // Content-Length was checked on arrival; a chunked body is only measurable once read.
      if (Buffer.byteLength(text) > config.MAX_BODY_BYTES) throw new ApiError('BAD_REQUEST', `Request body exceeds ${config.MAX_BODY_BYTES} bytes`)
      if (text.trim() === '') return {}
      if (!/^application\/(.+\+)?json\b/i.test(contentType)) throw new ApiError('BAD_REQUEST', 'Request bodies must be JSON (Content-Type: application/json)')
      try {
        return JSON.parse(text)
      } catch {
        throw new ApiError('BAD_REQUEST', 'Request body is not valid JSON')
      }
    })
    .onError({ as: 'global' }, ({ request, code, error }) => {
      const st = stateOf(request)
      let status: number, errCode: string, message: string
      let extra: ApiError['extra'] = {}
      if (error instanceof ApiError) {
        ;({ status, code: errCode, message, extra } = error)
      } else if (code === 'PARSE') {
        ;[status, errCode, message] = [400, 'BAD_REQUEST', 'Request body is not valid JSON']
      } else if (code === 'VALIDATION') {
        ;[status, errCode, message] = [400, 'VALIDATION_ERROR', 'The request does not match the schema']
        extra = { errors: validationErrors(error) }
      } else if (code === 'NOT_FOUND') {
        ;[status, errCode, message] = [404, 'NOT_FOUND', `No route matches ${request.method} ${new URL(request.url).pathname}`]
      } else {
        log.error('unhandled error', { requestId: st.requestId, err: error, stack: (error as Error)?.stack })
        ;[status, errCode, message] = [500, 'INTERNAL_ERROR', 'The server failed to handle this request']
      }
      if (st.allowedCodes && !st.allowedCodes.has(errCode)) {
        log.error('route raised a code outside its declared error sets', { requestId: st.requestId, problem: errCode })
        if (strictErrorSets) [status, errCode, message] = [500, 'INTERNAL_ERROR', 'The server failed to handle this request']
      }
      return problemResponse({ status, code: errCode, message, requestId: st.requestId, errors: extra.errors, headers: extra.headers })
    })
    // Elysia maps ordinary results itself (its fast path). This hook only steps in for a request that holds an
    // Idempotency-Key, whose exact response must be stored before it is sent.
    .mapResponse({ as: 'global' }, ({ request, responseValue, set }) => {
      const idem = stateOf(request).idempotency
      if (!idem?.owned || !idem.scope) return
      idem.owned = false
      return storeAndSend(idem.scope, idem.key, toResponse(responseValue, set))
    })
    .macro({
      errors: (sets: readonly ErrorSetName[]) => {
        // Built once per route, when the route is defined.
        const allowed = codesOf([...sets, 'U401', 'F403', 'R429'])
        return {
          // The named parser only tells the OpenAPI generator the body is JSON; onParse above does the parsing.
          // Elysia's macro type admits parser functions only, hence the cast.
          parse: 'json' as never,
          detail: { 'x-error-sets': [...sets] } as never, // an OpenAPI extension key Elysia's detail type does not list
          transform({ request }: { request: Request }) {
            stateOf(request).allowedCodes = allowed
          },
        }
      },
      public: (on: boolean) => ({
        detail: { security: [] },
        transform({ request }) {
          if (!on) return
          const st = stateOf(request)
          spend(`ip:${st.ip}`, config.RATE_LIMIT_ANONYMOUS_PER_MINUTE)
        },
      }),
      auth: (requirement: AuthRequirement) => ({
        detail: {
          security: SECURITY,
          'x-permissions': permissionsOf(requirement),
          description: describeRequirement(requirement),
        },
        // Synchronous for a PAT in this replica's cache; a promise only when a lookup is needed.
        transform({ request }) {
          const st = stateOf(request)
          let resolved: ReturnType<typeof authenticate>
          try {
            resolved = authenticate(deps, request, requirement)
          } catch (err) {
            throw refused(st, err)
          }
          if (resolved instanceof Promise) return resolved.then((p) => admitted(st, p), (err) => { throw refused(st, err) })
          admitted(st, resolved)
        },
        resolve({ request }) {
          return { principal: stateOf(request).principal! }
        },
      }),
      // 'user' scopes keys to the caller instead of the tenant: for operations that change which tenant that is.
      idempotent: (on: boolean | 'user') => ({
        detail: {
          parameters: [{
            in: 'header', name: 'Idempotency-Key', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
            description: 'Unique per tenant for 24 hours; a repeat with the same body replays the first response.',
          }],
        },
        transform({ request }) {
          if (!on) return
          const key = parseIdempotencyKey(request.headers.get(IDEMPOTENCY_HEADER))
          if (key) stateOf(request).idempotency = { key }
        },
        async beforeHandle({ request, body, route }) {
          const st = stateOf(request)
          const idem = st.idempotency
          if (!on || !idem) return
          idem.scope = idempotencyScope(st.principal, `${request.method} ${route}`, on === 'user')
          const result = await claimKey(deps.sql, {
            scope: idem.scope, key: idem.key, requestHash: requestHash(request.method, new URL(request.url).pathname, body),
            ttlHours: config.IDEMPOTENCY_TTL_HOURS, lockSeconds: config.IDEMPOTENCY_LOCK_SECONDS,
          })
          if (result.kind === 'claimed') {
            idem.owned = true
            return
          }
          if (result.kind === 'conflict') {
            throw new ApiError('IDEMPOTENCY_CONFLICT', result.reason === 'in_flight'
              ? 'A request with this Idempotency-Key is still being processed'
              : 'This Idempotency-Key was already used with a different request')
          }
          idem.replayed = true
          return replayResponse(deps.keys.idempotency, result.sealed, st.requestId)
        },
      }),
    })
    .as('global')

  // The access log is the one hook every response would pay for, so it exists only when it would write.
  if (config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'info') {
    plugin.onAfterResponse({ as: 'global' }, ({ request, set }) => {
      const st = stateOf(request)
      log.info('request', {
        requestId: st.requestId, method: request.method, path: new URL(request.url).pathname, status: set.status,
        ms: Math.round((performance.now() - st.startedAt) * 10) / 10, user: st.principal?.userId, tenant: st.principal?.membership?.tenantId,
      })
    })
  }
  return plugin
}
