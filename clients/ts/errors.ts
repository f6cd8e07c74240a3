// A failed call as one exception type: the API's problem+json (status, code, requestId, and the fields a validation
// error names), so a caller branches on `code` rather than parsing bodies.
import type { components } from './schema.gen'

export type Problem = components['schemas']['ProblemJson']

export class RcpError extends Error {
  override readonly name = 'RcpError'
  readonly status: number
  /** The catalogue's code (`VALIDATION_ERROR`, `RATE_LIMITED`, …); `HTTP_<status>` when the answer was not problem+json. */
  readonly code: string
  /** The request's id (problem body, else X-Request-Id): what to quote to an operator. */
  readonly requestId: string | null
  readonly title: string | null
  readonly type: string | null
  /** The fields a VALIDATION_ERROR names. */
  readonly errors: { path: string; message: string }[]

  constructor(status: number, problem: Partial<Problem>, requestId: string | null) {
    super(problem.message ?? problem.title ?? `HTTP ${status}`)
    this.status = status
    this.code = problem.code ?? `HTTP_${status}`
    this.requestId = problem.requestId ?? requestId
    this.title = problem.title ?? null
    this.type = problem.type ?? null
    this.errors = problem.errors ?? []
  }
}

/** The error a non-2xx response stands for. Reads a clone: the response itself stays readable. */
export async function errorOf(response: Response): Promise<RcpError> {
  const text = await response.clone().text()
  let problem: Partial<Problem> = {}
  if (/^application\/(problem\+)?json/.test(response.headers.get('content-type') ?? '')) {
    try {
      const parsed = JSON.parse(text) as unknown
      if (parsed && typeof parsed === 'object') problem = parsed as Partial<Problem>
    } catch {
      // a body that is not JSON after all: the status alone speaks
    }
  }
  return new RcpError(response.status, problem, response.headers.get('x-request-id'))
}
