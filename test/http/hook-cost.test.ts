import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { buildApp } from '../../api/app'
import { composeApi } from '../../api/compose'
import { loadConfig } from '../../api/platform/config'
import { createDb } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { ELYSIA_HELLO_PATH, withBaselines } from '../../bench/baselines'

// Every request pays for the global hooks, so their number and shape are checked, not only their answers: counted
// by Elysia's documented trace (each lifecycle event reports how many hooks it runs), never read from its internals.
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' })
const sql = createDb(config.DATABASE_URL, { max: 1 })
const deps = composeApi(config, sql, createLogger('silent', {}))
afterAll(async () => {
  await sql.end()
})

type Event = 'request' | 'parse' | 'transform' | 'beforeHandle' | 'mapResponse'
const EVENTS: Event[] = ['request', 'parse', 'transform', 'beforeHandle', 'mapResponse']

/** How many hooks each lifecycle event ran for one request to `path`, on the whole app inside a traced one. */
async function hooksRun(path: string): Promise<Record<Event, number>> {
  const counts = {} as Record<Event, number>
  const traced = new Elysia()
    .trace({ as: 'global' }, (t) => {
      t.onRequest(({ total }) => {
        counts.request = total
      })
      t.onParse(({ total }) => {
        counts.parse = total
      })
      t.onTransform(({ total }) => {
        counts.transform = total
      })
      t.onBeforeHandle(({ total }) => {
        counts.beforeHandle = total
      })
      t.onMapResponse(({ total }) => {
        counts.mapResponse = total
      })
    })
    .use(withBaselines(buildApp(deps)))
  const res = await traced.handle(new Request(`http://localhost${path}`))
  await res.arrayBuffer()
  return Object.fromEntries(EVENTS.map((e) => [e, counts[e] ?? 0])) as Record<Event, number>
}

describe("the conventions' cost", () => {
  test('one request hook however many domains use the plugin, and no parse, transform or response hook on a route without conventions', async () => {
    expect(await hooksRun('/bench/hello-elysia')).toEqual({ request: 1, parse: 0, transform: 0, beforeHandle: 0, mapResponse: 0 })
  })

  test("a public /v1 route runs its own macros only: the errors macro's parser pair and transform, the public transform and resolve", async () => {
    expect(await hooksRun('/v1/storage-regions')).toEqual({ request: 1, parse: 2, transform: 2, beforeHandle: 1, mapResponse: 0 })
  })

  test('a route that needs no convention but the request id is answered without a promise', () => {
    const app = withBaselines(buildApp(deps))
    app.compile()
    const res = app.fetch(new Request(`http://localhost${ELYSIA_HELLO_PATH}`)) // the benchmarks' Elysia baseline
    expect(res).toBeInstanceOf(Response)
    expect((res as Response).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})
