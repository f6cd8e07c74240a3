import postgres from 'postgres'
import { tracedSql } from './db-tracing'
import type { Logger } from './log'
import { tracer } from './tracing'

export type Sql = postgres.Sql<Record<string, never>>
export type Tx = postgres.TransactionSql<Record<string, never>>
/** Either the pool or an open transaction: query modules accept both so callers choose the transaction. */
export type Db = Sql | Tx

/** `name` becomes application_name (pg_stat_activity); `settings` are session parameters for every connection;
 *  `connectTimeoutSeconds` bounds how long a query waits for a new connection (the driver's own default is 30 s);
 *  `onQuery` sees the text of every statement the pool sends (a test counting a request's round trips). */
export function createDb(
  url: string,
  options: { max?: number; name?: string; settings?: Record<string, string>; connectTimeoutSeconds?: number; onQuery?: (text: string) => void } = {},
): Sql {
  const sql = postgres(url, {
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    // Reconnect soon after a lost connection, every time: the driver's own backoff grows to 20 s, and queries
    // queued behind a connection wait that long for an answer (a success, or the error a request answers 503).
    backoff: () => 0.1 + Math.random() * 0.2,
    onnotice: () => {},
    ...(options.onQuery ? { debug: (_conn: number, text: string) => options.onQuery!(text) } : {}),
    // bigint versions and counters come back as JS numbers; all stay far below 2^53.
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
      date: { to: 1184, from: [1082, 1114, 1184], serialize: (x: Date | string) => (x instanceof Date ? x : new Date(x)).toISOString(), parse: parseTime },
    },
    transform: { undefined: null },
    connection: { application_name: options.name ?? 'rcp', ...options.settings },
  }) as unknown as Sql
  // Only a traced process (docs/operations.md "Traces") pays for the wrapper; the pool of any other is the driver's own.
  const t = tracer()
  return t ? tracedSql(t, sql) : sql
}

/** A date or time as Postgres writes it ("0029-11-15 12:20:18.799+00"), read as ISO 8601. The driver hands that text
 *  to `new Date`, which in Bun reads it only from year 100 on: a stored time of an earlier year (an audit window a
 *  client named) came back as Invalid Date and failed the request that returned it. */
export function parseTime(text: string): Date {
  const space = text.indexOf(' ')
  if (space < 0) return new Date(text) // a date alone: already ISO 8601
  return new Date(`${text.slice(0, space)}T${text.slice(space + 1)}`.replace(/([+-]\d{2})$/, '$1:00'))
}

// The driver's codes for a connection that could not be made or was lost, the sockets' own, and Postgres's
// SQLSTATEs of classes 08 (connection exception) and 57P (operator intervention: shutting down, starting up).
const UNAVAILABLE_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
])

/** True when the error says the database cannot be reached now (down, restarting, unreachable), not that the
 *  query was wrong: the request may be retried as it is. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true
  }
  return false
}

/** postgres@3.4.9 may flush a buffered write from a setImmediate after the connection closed (porsager/postgres
 *  #1066, #1208): a TypeError thrown outside any query, whose query the driver has already rejected with
 *  CONNECTION_CLOSED. Left alone it ends the process in the middle of a database outage. */
export function isDriverClosedSocketWrite(err: unknown): boolean {
  return err instanceof TypeError && /socket\.write|reading 'write'/.test(err.message) && (err.stack ?? '').includes('postgres/src/connection.js')
}

/** For the entry points: survive that one driver error (logged), and end the process on any other uncaught one as
 *  the runtime would. */
export function surviveDriverClosedSocketWrites(log: Logger): void {
  process.on('uncaughtException', (err) => {
    if (isDriverClosedSocketWrite(err)) return void log.warn('database driver wrote to a closed connection; its query had already failed', { err })
    log.error('uncaught exception', { err, stack: err instanceof Error ? err.stack : undefined })
    process.exit(1)
  })
}
