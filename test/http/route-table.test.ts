import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { composeApi } from '../../api/compose'
import { RouteTable } from '../../api/http/method-index'
import { httpConventions } from '../../api/http/plugin'
import { loadConfig } from '../../api/platform/config'
import { createDb } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'

// The conventions hold no registry keyed by the process's dependencies: each app is handed its own plugin and its
// own route table, so two apps built from one set of dependencies (a test's, a benchmark's) answer from their own.
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' })
const sql = createDb(config.DATABASE_URL, { max: 1 })
const deps = composeApi(config, sql, createLogger('silent', {}))
afterAll(async () => {
  await sql.end()
})

function appWith(method: 'get' | 'post') {
  const routes = new RouteTable()
  const http = httpConventions(deps, routes)
  const app = new Elysia().use(http).use(new Elysia({ prefix: '/v1' }).use(http)[method]('/thing', () => ({ data: 'ok' }), { public: true, errors: ['A400'] }))
  routes.publish(app.routes)
  return app
}

describe('the route table behind the 405 answers', () => {
  test('two apps built from the same dependencies each answer 405 from their own routes', async () => {
    const reads = appWith('get')
    const writes = appWith('post')
    const put = (app: Elysia) => app.handle(new Request('http://localhost/v1/thing', { method: 'PUT' }))
    const [a, b] = [await put(reads as unknown as Elysia), await put(writes as unknown as Elysia)]
    expect({ status: a.status, allow: a.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD' })
    expect({ status: b.status, allow: b.headers.get('allow') }).toEqual({ status: 405, allow: 'POST' })
    expect((await reads.handle(new Request('http://localhost/v1/thing'))).status).toBe(200)
  })

  test('an app that has not published its routes answers an unknown method with 404, not a guess', async () => {
    const app = new Elysia().use(httpConventions(deps, new RouteTable())).get('/v1/thing', () => ({ data: 'ok' }))
    const res = await app.handle(new Request('http://localhost/v1/thing', { method: 'DELETE' }))
    expect(res.status).toBe(404)
    expect((await res.json()).code).toBe('NOT_FOUND')
  })
})
