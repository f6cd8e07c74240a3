import { afterAll, describe, expect, test } from 'bun:test'
import { buildApp } from '../../api/app'
import { composeApi } from '../../api/compose'
import { loadConfig } from '../../api/platform/config'
import { createDb } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'

// Every request pays for the global hooks, so their number and shape are checked, not only their answers.
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', BENCH_HELLO: 'true' })
const sql = createDb(config.DATABASE_URL, { max: 1 })
const app = buildApp(composeApi(config, sql, createLogger('silent', {})))
afterAll(async () => { await sql.end() })

describe('the conventions\' cost', () => {
  test('one request hook however many domains use the plugin, and no parse or response hook on every route', () => {
    const event = (app as unknown as { event: Record<string, unknown[] | undefined> }).event
    expect(event.request?.length).toBe(1)
    expect(event.parse?.length ?? 0).toBe(0)
    expect(event.mapResponse?.length ?? 0).toBe(0)
  })

  test('a route that needs no convention but the request id is answered without a promise', () => {
    app.compile()
    const res = app.fetch(new Request('http://localhost/bench/hello-elysia')) // the benchmarks' Elysia baseline
    expect(res).toBeInstanceOf(Response)
    expect((res as Response).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})
