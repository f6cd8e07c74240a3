import type { FieldError } from '../platform/errors'

export const PROBLEM_TYPE_BASE = 'https://docs.rcp.dev/problems/'

export interface ProblemInput {
  status: number
  code: string
  message: string
  requestId: string
  errors?: FieldError[]
  /** The OAuth error name of a device token answer (api/device-authorizations). */
  oauthError?: string
  headers?: Record<string, string>
}

/** RFC 9457 body with the interface's `code`; never a stack trace or SQL. */
export function problemResponse(p: ProblemInput): Response {
  const body = {
    type: PROBLEM_TYPE_BASE + p.code.toLowerCase().replaceAll('_', '-'),
    title: p.code
      .toLowerCase()
      .replaceAll('_', ' ')
      .replace(/^./, (c) => c.toUpperCase()),
    status: p.status,
    code: p.code,
    message: p.message,
    requestId: p.requestId,
    ...(p.errors ? { errors: p.errors } : {}),
    ...(p.oauthError ? { error: p.oauthError } : {}),
  }
  return new Response(JSON.stringify(body), {
    status: p.status,
    headers: { 'content-type': 'application/problem+json', 'x-request-id': p.requestId, ...p.headers },
  })
}
