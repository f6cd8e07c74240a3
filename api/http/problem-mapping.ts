import { isDatabaseUnavailable } from '../platform/db'
import { isTemporalUnavailable } from '../platform/temporal'
import { ApiError } from '../platform/errors'
import type { Logger } from '../platform/log'
import { problemResponse } from './problem'
import { stateOf } from './request-state'

/** Elysia names an issue about the whole value (an absent body, an array where an object belongs) `root`; the
 *  interface names it by its part alone (`body`), unless the value really has a field called root. */
function validationErrors(error: unknown): { path: string; message: string }[] {
  const e = error as { all?: { path?: string; message?: string; summary?: string }[]; type?: string; value?: unknown }
  const where = e.type ?? 'body'
  const hasRootField = !!e.value && typeof e.value === 'object' && 'root' in e.value
  return (e.all ?? []).map((i) => {
    let p = String(i.path ?? '')
      .replace(/^\//, '')
      .replaceAll('/', '.')
    if (p === 'root' && !hasRootField) p = ''
    return { path: p ? `${where}.${p}` : where, message: i.message ?? i.summary ?? 'is invalid' }
  })
}

const INTERNAL = [500, 'INTERNAL_ERROR', 'The server failed to handle this request'] as const
/** The answer while the database is away; Retry-After: a restart takes seconds. */
export const DATABASE_UNAVAILABLE = {
  status: 503,
  code: 'SERVICE_UNAVAILABLE',
  message: 'The database is unavailable; retry shortly',
  extra: { headers: { 'retry-after': '2' } },
} as const

/** The answer while Temporal (which runs every build, provisioning, validation and export) cannot take a start. */
const TEMPORAL_UNAVAILABLE = {
  status: 503,
  code: 'SERVICE_UNAVAILABLE',
  message: 'The workflow service is unavailable; retry shortly',
  extra: { headers: { 'retry-after': '5' } },
} as const

type Failure = { request: Request; code: unknown; error: unknown; set: { status?: number | string } }

/** What the problem mapping reports to the metrics (api/http/metrics.ts). */
export interface FailureCounts {
  rateLimited(budget: string): void
  authFailed(reason: string): void
  idempotency(outcome: 'conflict'): void
}

// Refusals of the credential itself; a 403 for a missing permission is not an authentication failure.
const AUTH_FAILURES = new Set(['UNAUTHORIZED', 'CSRF_INVALID'])

/** Every failure becomes problem+json, and a code outside the route's declared error sets is logged (and, outside
 *  production, answered as a 500 so tests catch it). It never returns a promise; written so Elysia does not take it
 *  for one either (see arrival.ts), which would make every route's handler async. */
export function problemMapping(
  log: Logger,
  strictErrorSets: boolean,
  allowedMethods: (pathname: string) => string[],
  databaseUnavailable: () => void,
  counts?: FailureCounts,
) {
  return function toProblem({ request, code, error, set }: Failure): Response {
    const st = stateOf(request)
    let status: number, errCode: string, message: string
    let extra: ApiError['extra'] = {}
    // Elysia wraps whatever a body parser throws in its ParseError; ours throws ApiErrors that say what was wrong.
    const cause = code === 'PARSE' ? (error as { cause?: unknown }).cause : undefined
    if (error instanceof ApiError || cause instanceof ApiError) {
      ;({ status, code: errCode, message, extra } = (cause instanceof ApiError ? cause : error) as ApiError)
    } else if (code === 'PARSE') {
      ;[status, errCode, message] = [400, 'BAD_REQUEST', 'Request body is not valid JSON']
    } else if (code === 'VALIDATION') {
      ;[status, errCode, message] = [400, 'VALIDATION_ERROR', 'The request does not match the schema']
      extra = { errors: validationErrors(error) }
    } else if (code === 'NOT_FOUND') {
      const path = new URL(request.url).pathname
      const allow = allowedMethods(path)
      if (allow.length > 0) {
        ;[status, errCode, message] = [405, 'METHOD_NOT_ALLOWED', `${path} does not serve ${request.method}; it serves ${allow.join(', ')}`]
        extra = { headers: { allow: allow.join(', ') } }
      } else {
        ;[status, errCode, message] = [404, 'NOT_FOUND', `No route matches ${request.method} ${path}`]
      }
    } else if (isDatabaseUnavailable(error)) {
      // Nothing is wrong with the request: the same request succeeds once the database is back.
      log.warn('database unavailable', { requestId: st.requestId, err: error })
      databaseUnavailable()
      ;({ status, code: errCode, message, extra } = DATABASE_UNAVAILABLE)
    } else if (isTemporalUnavailable(error)) {
      // The request was fine and what it committed stands (a package marked failed, buckets still provisioning):
      // the same request succeeds once Temporal answers again.
      log.warn('temporal unavailable', { requestId: st.requestId, err: error })
      ;({ status, code: errCode, message, extra } = TEMPORAL_UNAVAILABLE)
    } else {
      log.error('unhandled error', { requestId: st.requestId, err: error, stack: (error as Error)?.stack })
      ;[status, errCode, message] = INTERNAL
    }
    if (st.allowedCodes && !st.allowedCodes.has(errCode)) {
      log.error('route raised a code outside its declared error sets', { requestId: st.requestId, problem: errCode })
      if (strictErrorSets) [status, errCode, message] = INTERNAL
    }
    // The after-response hooks (access log, metrics) read the status here: Elysia does not take it from the Response.
    set.status = status
    if (counts) {
      if (status === 429) counts.rateLimited(extra.budget ?? 'other')
      else if (status === 401 || AUTH_FAILURES.has(errCode)) counts.authFailed(errCode)
      else if (errCode === 'IDEMPOTENCY_CONFLICT') counts.idempotency('conflict')
    }
    // biome-ignore lint/style/useConst: a const would be folded into `return problemResponse(` by the transpiler, which Elysia reads as async (arrival.ts)
    let problem: Response | undefined
    problem = problemResponse({
      status,
      code: errCode,
      message,
      requestId: st.requestId,
      errors: extra.errors,
      oauthError: extra.oauthError,
      headers: extra.headers,
    })
    return problem
  }
}
