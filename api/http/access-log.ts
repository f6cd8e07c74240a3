import type { Logger } from '../platform/log'
import { spanOf, stateOf } from './request-state'

type Finished = { request: Request; set: { status?: number | string } }

/** The path of a request's absolute URL as the client sent it, without its query: sliced, since parsing the whole URL
 *  with `new URL` on every response only to read its path is the dearer way to the same text. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const query = url.indexOf('?', start)
  return url.slice(start, query < 0 ? undefined : query)
}

/** One line per request. The plugin registers it only when the level would write it: every response pays for it. */
export function accessLog(log: Logger, traced = false) {
  return function logRequest({ request, set }: Finished): void {
    const st = stateOf(request)
    // In a traced process the line names the request's trace and span (docs/operations.md "Traces"), to find one from the other.
    const ids = traced ? spanOf(request)?.spanContext() : undefined
    log.info('request', {
      requestId: st.requestId,
      method: request.method,
      path: pathOf(request.url),
      status: set.status,
      ms: Math.round((performance.now() - st.startedAt) * 10) / 10,
      user: st.principal?.userId,
      tenant: st.principal?.membership?.tenantId,
      ...(ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {}),
    })
  }
}
