import type { Logger } from '../platform/log'
import { stateOf } from './request-state'

type Finished = { request: Request; set: { status?: number | string } }

/** One line per request. The plugin registers it only when the level would write it: every response pays for it. */
export function accessLog(log: Logger) {
  return function logRequest({ request, set }: Finished): void {
    const st = stateOf(request)
    log.info('request', {
      requestId: st.requestId, method: request.method, path: new URL(request.url).pathname, status: set.status,
      ms: Math.round((performance.now() - st.startedAt) * 10) / 10, user: st.principal?.userId, tenant: st.principal?.membership?.tenantId,
    })
  }
}
