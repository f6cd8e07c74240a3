// The two baselines every HTTP row of the benchmarks is read against besides the ceiling (bench/ceiling.ts), mounted
// on the API's own app and server by the benchmarks alone (bench/api-entry.ts): the product serves neither.
import type { App } from '../api/app'

/** Served by Bun itself on the API's server and port, before Elysia sees the request: no framework or convention
 *  cost is in it. */
export const BUN_HELLO_PATH = '/bench/hello'
/** An Elysia route on the API's app, added after every plugin: it pays only what every route pays (the global
 *  hooks), and is hidden from the OpenAPI document. */
export const ELYSIA_HELLO_PATH = '/bench/hello-elysia'

/** The app with both baselines; call before it listens (Bun takes its native routes when the server starts). */
export function withBaselines(app: App): App {
  app.config.serve = { ...app.config.serve, routes: { ...app.config.serve?.routes, [BUN_HELLO_PATH]: () => new Response('hello') } }
  app.get(ELYSIA_HELLO_PATH, () => 'hello', { detail: { hide: true } })
  return app
}
