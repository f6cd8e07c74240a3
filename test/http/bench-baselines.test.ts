import { afterAll, describe, expect, test } from 'bun:test'
import { buildApp } from '../../api/app'
import { composeApi } from '../../api/compose'
import { loadConfig } from '../../api/platform/config'
import { createDb } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { BUN_HELLO_PATH, ELYSIA_HELLO_PATH, withBaselines } from '../../bench/baselines'

// The benchmarks' baselines are theirs alone (bench/baselines.ts, mounted by bench/api-entry.ts): the product's app
// serves neither, and the app the benchmarks run serves both on its one server, Bun's before Elysia sees it.
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' })
const sql = createDb(config.DATABASE_URL, { max: 1 })
const listen = (app: ReturnType<typeof buildApp>) => app.listen({ hostname: '127.0.0.1', port: 0 })
const product = listen(buildApp(composeApi(config, sql, createLogger('silent', {}))))
const benched = listen(withBaselines(buildApp(composeApi(config, sql, createLogger('silent', {})))))
afterAll(async () => {
  await product.stop()
  await benched.stop()
  await sql.end()
})

const get = async (app: typeof product, path: string) => {
  const res = await fetch(`http://127.0.0.1:${app.server!.port}${path}`)
  return { status: res.status, body: await res.text(), requestId: res.headers.get('x-request-id') }
}

describe('the benchmark baselines', () => {
  test('the product serves neither', async () => {
    expect((await get(product, BUN_HELLO_PATH)).status).toBe(404)
    expect((await get(product, ELYSIA_HELLO_PATH)).status).toBe(404)
  })

  test('Bun answers its hello before Elysia sees the request (no request id); the Elysia hello pays the global hooks', async () => {
    expect(await get(benched, BUN_HELLO_PATH)).toEqual({ status: 200, body: 'hello', requestId: null })
    expect(await get(benched, ELYSIA_HELLO_PATH)).toEqual({ status: 200, body: 'hello', requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
  })

  test("the OpenAPI document is the product's, byte for byte: the Elysia hello is hidden", async () => {
    const doc = await get(product, '/v1/openapi.json')
    expect(doc.status).toBe(200)
    expect((await get(benched, '/v1/openapi.json')).body).toBe(doc.body)
  })
})
