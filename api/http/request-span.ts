// One server span per request, registered only in a traced process (docs/operations.md "Traces"). It starts in the
// onRequest hook, which enters its context for the rest of the request (the span is active through every later hook,
// the handler, its SQL and the workflow starts: api/platform/trace-context.ts), and ends in the after-response hook, where the matched route template names it: `GET /v1/tokens/self`, never a
// path with ids in it. It records the method, the template, the status and the request id: no path, no query
// string, no header, no body. Every request starts a new trace: a client's traceparent is not trusted (an
// internet-facing API would let any caller choose trace ids and force sampling).
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { Tracing } from '../platform/tracing'
import { attachSpan, spanOf, stateOf } from './request-state'

// A client may send any token as a method; the span names use these or `_OTHER` (the semantic conventions' word).
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

type Finished = { request: Request; route?: string; set: { status?: number | string } }

export function requestSpans({ tracer, enter }: Pick<Tracing, 'tracer' | 'enter'>) {
  return {
    /** The onRequest part: the span starts, on a root of its own, and is the active context from here on. */
    start({ request }: { request: Request }): void {
      const method = METHODS.has(request.method) ? request.method : '_OTHER'
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, ROOT_CONTEXT)
      attachSpan(request, span)
      enter(trace.setSpan(ROOT_CONTEXT, span))
    },
    /** The after-response part: name, route, status, request id; then the span ends. */
    finish({ request, route, set }: Finished): void {
      const span = spanOf(request)
      if (!span) return
      const status = Number(set.status ?? 200)
      const template = route || 'unmatched'
      span.updateName(`${METHODS.has(request.method) ? request.method : '_OTHER'} ${template}`)
      span.setAttributes({ 'http.route': template, 'http.response.status_code': status, 'rcp.request_id': stateOf(request).requestId })
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      span.end()
    },
  }
}
