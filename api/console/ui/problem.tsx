// Errors as the server says them: the problem+json message (and each field's), never a guess of ours.

interface ProblemFields {
  status: number
  code: string
  message: string
  errors?: { path: string; message: string }[]
}

export class Problem extends Error {
  readonly status: number
  readonly code: string
  readonly errors: { path: string; message: string }[]

  constructor(p: ProblemFields) {
    super(p.message)
    this.status = p.status
    this.code = p.code
    this.errors = p.errors ?? []
  }

  static from(body: unknown, response: Response): Problem {
    const b = (body && typeof body === 'object' ? body : {}) as Partial<ProblemFields>
    return new Problem({
      status: response.status,
      code: typeof b.code === 'string' ? b.code : `HTTP_${response.status}`,
      message: typeof b.message === 'string' ? b.message : `The platform answered ${response.status} ${response.statusText}`.trim(),
      errors: Array.isArray(b.errors) ? b.errors : [],
    })
  }
}

export const asProblem = (err: unknown): Problem =>
  err instanceof Problem ? err : new Problem({ status: 0, code: 'CLIENT', message: err instanceof Error ? err.message : String(err) })

/** A problem where it happened: its message, the fields it names, and its code for a support request. */
export function ProblemMessage({ problem }: { problem: Problem | null }) {
  if (!problem) return null
  if (problem.status === 403) return <Forbidden problem={problem} />
  return (
    <div class="problem" role="alert">
      <p>
        <strong>{problem.message}</strong> <span class="code">({problem.code})</span>
      </p>
      {problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.path}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

/** The forbidden state: the server refused, and says why. */
export function Forbidden({ problem }: { problem?: Problem }) {
  return (
    <div class="forbidden" role="alert">
      <p>
        <strong>Your role does not allow this.</strong>
      </p>
      {problem && <p>{problem.message}</p>}
    </div>
  )
}
