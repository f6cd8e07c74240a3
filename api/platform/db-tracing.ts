// SQL spans (docs/operations.md "Traces"): the `postgres` driver has no OpenTelemetry instrumentation, so a traced process
// wraps its pool. A query is a lazy promise that runs when first awaited; fragments (`sql\`and x\``, `sql.unsafe`
// column lists) are queries that are never awaited themselves. So the span starts at the first `then`, not at the
// tagged call, and a fragment never makes one. The span carries the statement text with its $n placeholders,
// never a parameter value, and on failure only the SQLSTATE: Postgres messages quote values ("invalid input
// syntax for type uuid: ...").
import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'

const MAX_STATEMENT_CHARS = 2000

type Thenable = { then(onFulfilled?: unknown, onRejected?: unknown): Promise<unknown>; strings?: unknown; statement?: { string?: string } | null }
type AnyFn = (...args: unknown[]) => unknown

const isTemplate = (first: unknown): boolean => Array.isArray(first) && Array.isArray((first as unknown as { raw?: unknown }).raw)

/** The first keyword of the statement: the span's name (low cardinality: SELECT, INSERT, WITH...). */
function operationOf(strings: unknown): string {
  const text = typeof strings === 'string' ? strings : Array.isArray(strings) ? String(strings[0] ?? '') : ''
  const word = /^\s*([A-Za-z]+)/.exec(text)?.[1]
  return word ? word.toUpperCase() : 'SQL'
}

function traceQuery(tracer: Tracer, query: Thenable): Thenable {
  const original = query.then
  let settled: Promise<unknown> | undefined
  // biome-ignore lint/suspicious/noThenProperty: the query is a thenable by design (postgres.js); its span starts when it is awaited
  query.then = function then(onFulfilled?: unknown, onRejected?: unknown) {
    settled ??= run()
    return settled.then(onFulfilled as never, onRejected as never)
  }
  const run = () => {
    const parent = context.active()
    if (!trace.getSpan(parent)) return new Promise((resolve, reject) => void original.call(query, resolve, reject))
    const op = operationOf(query.strings)
    const span = tracer.startSpan(op, { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql', 'db.operation.name': op } }, parent)
    const end = (code?: string) => {
      const text = query.statement?.string
      if (text) span.setAttribute('db.query.text', text.length > MAX_STATEMENT_CHARS ? text.slice(0, MAX_STATEMENT_CHARS) : text)
      if (code !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: code })
      span.end()
    }
    return new Promise(
      (resolve, reject) =>
        void original.call(
          query,
          (rows: unknown) => {
            end()
            resolve(rows)
          },
          (err: unknown) => {
            const code = (err as { code?: unknown })?.code
            end(typeof code === 'string' ? code : 'error')
            reject(err)
          },
        ),
    )
  }
  return query
}

/** The pool (or a transaction) with every awaited query in a span of its own. */
export function tracedSql<T extends AnyFn>(tracer: Tracer, sql: T): T {
  const wrapScope = (fn: unknown) => (typeof fn === 'function' ? (scope: AnyFn) => (fn as AnyFn)(tracedSql(tracer, scope)) : fn)
  return new Proxy(sql, {
    apply(target, thisArg, args) {
      const result = Reflect.apply(target, thisArg, args)
      return isTemplate(args[0]) ? traceQuery(tracer, result as Thenable) : result
    },
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver)
      if (typeof value !== 'function') return value
      // A transaction's or savepoint's callback gets the traced scope; `unsafe` is a query like a tagged one.
      if (prop === 'begin' || prop === 'savepoint') {
        return (...args: unknown[]) => (value as AnyFn).apply(target, args.map(wrapScope))
      }
      if (prop === 'unsafe') return (...args: unknown[]) => traceQuery(tracer, (value as AnyFn).apply(target, args) as Thenable)
      return value
    },
  })
}
