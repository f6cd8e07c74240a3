import type { Config } from '../platform/config'
import { codesOf, type ErrorSetName } from '../platform/errors'
import { jsonBodyParser } from './json-body'
import { GATE_SETS, startsNewWork } from './new-work'
import { refuseNulInUrl } from './nul'
import { stateOf } from './request-state'

/** `errors`: the error sets a route declares (problem-mapping.ts refuses any other code), and its JSON body
 *  parser. Every /v1 operation declares its sets, so the parser lives here rather than as a global hook: a global
 *  parse hook would make Elysia compile every route, body or not, as async. */
export function errorsMacro(config: Pick<Config, 'MAX_BODY_BYTES'>) {
  // The named 'json' parser after it never runs (ours always answers); it tells the OpenAPI generator the body is
  // JSON. Elysia's macro type admits parser functions only, hence the cast.
  const parse = [jsonBodyParser(config), 'json'] as never
  return (sets: readonly ErrorSetName[]) => {
    // Built once per route, when the route is defined.
    const allowed = codesOf([...sets, 'U401', 'F403', 'R429'])
    // An operation that starts new work also declares the gate's sets (api/http/openapi.ts adds them to its document).
    const gated = codesOf([...sets, 'U401', 'F403', 'R429', ...GATE_SETS])
    return {
      parse,
      detail: { 'x-error-sets': [...sets] } as never, // an OpenAPI extension key Elysia's detail type does not list
      transform({ request, route }: { request: Request; route: string }) {
        stateOf(request).allowedCodes = startsNewWork(request.method, route) ? gated : allowed
        refuseNulInUrl(request.url)
      },
    }
  }
}
