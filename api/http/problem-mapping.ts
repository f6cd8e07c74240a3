import { ApiError } from '../platform/errors'
import type { Logger } from '../platform/log'
import { problemResponse } from './problem'
import { stateOf } from './request-state'

function validationErrors(error: unknown): { path: string; message: string }[] {
  const e = error as { all?: { path?: string; message?: string; summary?: string }[]; type?: string }
  const where = e.type ?? 'body'
  return (e.all ?? []).map((i) => {
    const p = String(i.path ?? '').replace(/^\//, '').replaceAll('/', '.')
    return { path: p ? `${where}.${p}` : where, message: i.message ?? i.summary ?? 'is invalid' }
  })
}

const INTERNAL = [500, 'INTERNAL_ERROR', 'The server failed to handle this request'] as const

type Failure = { request: Request; code: unknown; error: unknown }

/** Every failure becomes problem+json, and a code outside the route's declared error sets is logged (and, outside
 *  production, answered as a 500 so tests catch it). Written so Elysia does not take it for async (see arrival.ts):
 *  an async error hook would make every route's handler async. */
export function problemMapping(log: Logger, strictErrorSets: boolean) {
  return function toProblem({ request, code, error }: Failure): Response {
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
      ;[status, errCode, message] = INTERNAL
    }
    if (st.allowedCodes && !st.allowedCodes.has(errCode)) {
      log.error('route raised a code outside its declared error sets', { requestId: st.requestId, problem: errCode })
      if (strictErrorSets) [status, errCode, message] = INTERNAL
    }
    const problem = problemResponse({ status, code: errCode, message, requestId: st.requestId, errors: extra.errors, headers: extra.headers })
    return problem
  }
}
