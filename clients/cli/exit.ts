// The exit codes of rcp (docs/cli.md#exit-codes): a script branches on them, so each kind of failure has its own.
import { RcpError } from '../ts'

export const EXIT = {
  ok: 0,
  /** The request was refused for another reason (a validation error, a conflict) or the work it waited for failed. */
  failed: 1,
  usage: 2,
  /** Not signed in, a token refused (401), a permission missing (403), a device sign-in denied or expired. */
  auth: 3,
  notFound: 4,
  /** A download whose SHA-256, SHA256SUMS, DSSE signature or statement does not match; a webhook whose signature does not. */
  verification: 5,
  /** The API answered 5xx, or could not be reached. */
  server: 6,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message)
  }
}

export const usage = (message: string) => new CliError(EXIT.usage, message)

/** The exit code an API error stands for. */
export function exitCodeOf(e: unknown): ExitCode {
  if (e instanceof CliError) return e.exitCode
  if (e instanceof RcpError) {
    if (e.status === 401 || e.status === 403) return EXIT.auth
    if (e.status === 404) return EXIT.notFound
    if (e.status >= 500) return EXIT.server
    return EXIT.failed
  }
  // fetch's own failures (connection refused, DNS): the server could not be reached
  if (e instanceof TypeError || (e as { code?: string })?.code === 'ConnectionRefused') return EXIT.server
  return EXIT.failed
}

/** One line for a person: the API's code and request id (what to quote to an operator), never a header or a token. */
export function describeError(e: unknown): string {
  if (e instanceof RcpError) return `${e.code} (${e.status}): ${e.message}${e.requestId ? ` [request ${e.requestId}]` : ''}`
  if (e instanceof Error) return e.message
  return String(e)
}
