import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { accessLog } from './access-log'
import { arrivalHook } from './arrival'
import { authMacros } from './auth-macros'
import { requestBudgets } from './budgets'
import type { HttpDeps } from './deps'
import { errorsMacro } from './errors-macro'
import { idempotentMacro } from './idempotent-macro'
import { RouteTable } from './method-index'
import { problemMapping } from './problem-mapping'
import { requestSpans } from './request-span'
import { tracing } from '../platform/tracing'

let instances = 0

/** Every /v1 convention in one plugin: request ids, body limit, JSON bodies, problem+json, error-set enforcement,
 *  request budgets, and the route macros `errors`, `public`, `auth`, `optionalAuth` and `idempotent`. The app builds
 *  it once (api/app.ts) and hands it to every domain, which `.use()`s it for the macros; its name and seed make
 *  Elysia register its hooks once however many domains use it, and apart from any other app's in the process. A
 *  known path asked with another method answers 405 with the methods `routes` holds. */
// Only two hooks are global (three with the access log, the metrics or the request span, which share one): the arrival hook (every
// request) and the problem mapping (failures). Whatever only some routes need is a macro, so the other routes never run it or compile around it.
export function httpConventions(deps: HttpDeps, routes: RouteTable = new RouteTable()) {
  const { config, log } = deps
  let server: Server<unknown> | null = null
  const budgets = requestBudgets(deps)
  // The access log and the metrics are hooks every response would pay for, so each exists only when it is on.
  const logged = config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'info'
  const metrics = config.METRICS ? deps.metrics : undefined
  const plugin = new Elysia({ name: 'http-conventions', seed: ++instances })
    // The client address needs the server; taking it from each request's context would make Elysia define a
    // `server` property on every context.
    .onStart(({ server: started }) => {
      server = started as Server<unknown> | null
      metrics?.attach(server)
    })
    .onRequest(arrivalHook(config, () => server, logged || !!metrics, deps.databaseCircuit))
    .onError(
      { as: 'global' },
      problemMapping(
        log,
        config.NODE_ENV !== 'production',
        (path) => routes.allowed(path),
        () => deps.databaseCircuit.trip(),
        metrics,
      ),
    )
    .macro({ errors: errorsMacro(config), ...authMacros(deps, budgets, routes), idempotent: idempotentMacro(deps) })
    .as('global')
  // Traces, like the log and the metrics, cost a request nothing unless on: no span, no hook. The span's hook comes
  // after the arrival hook, which makes the request's state.
  const t = tracing()
  const spans = t ? requestSpans(t) : undefined
  if (spans) plugin.onRequest(spans.start)
  // One after-response hook for all of them, so a response pays for one hook call however many of them are on. The
  // span ends last: the log line reads its ids.
  const hooks = [logged ? accessLog(log, !!spans) : undefined, metrics?.observe, spans?.finish].filter((h) => h !== undefined)
  type Finished = Parameters<(typeof hooks)[number]>[0]
  const finished =
    hooks.length === 1
      ? hooks[0]
      : hooks.length === 2
        ? (c: Finished) => {
            hooks[0]!(c)
            hooks[1]!(c)
          }
        : (c: Finished) => {
            for (const h of hooks) h(c)
          }
  if (finished) plugin.onAfterResponse({ as: 'global' }, finished)
  return plugin
}

/** What each domain's routes receive. */
export type HttpConventions = ReturnType<typeof httpConventions>
