import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'

const api = useApi({ MAX_BODY_BYTES: '2048' })

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${api.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })

function expectProblem(res: Response, json: any, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toBe('application/problem+json')
  // toMatchObject is given a copy: Bun's matcher writes its asymmetric matchers back into the received object.
  expect({ ...json }).toMatchObject({ status, code, type: expect.stringContaining('/problems/'), title: expect.any(String), message: expect.any(String) })
  expect(json.requestId).toBe(res.headers.get('x-request-id'))
  expect(JSON.stringify(json)).not.toMatch(/\bat .*\.ts:\d+|select |insert |postgres/i)
}

describe('problem+json and request ids', () => {
  test('malformed JSON is 400 BAD_REQUEST', async () => {
    const res = await post('/v1/users', '{"email": ')
    expectProblem(res, await res.json(), 400, 'BAD_REQUEST')
  })

  test('schema failures are 400 VALIDATION_ERROR with a path for each field', async () => {
    const res = await post('/v1/users', JSON.stringify({ email: 'not-an-email', password: 42 }))
    const json = await res.json()
    expectProblem(res, json, 400, 'VALIDATION_ERROR')
    expect(json.errors.map((e: any) => e.path).sort()).toEqual(['body.email', 'body.password'])
    for (const e of json.errors) expect(e.message.length).toBeGreaterThan(0)
  })

  test('unknown fields are refused rather than silently dropped', async () => {
    const res = await post('/v1/users', JSON.stringify({ email: 'x@example.test', password: 'long enough pw', admin: true }))
    expectProblem(res, await res.json(), 400, 'VALIDATION_ERROR')
  })

  test('an unknown route is 404 NOT_FOUND', async () => {
    const res = await fetch(`${api.url}/v1/no-such-thing`)
    expectProblem(res, await res.json(), 404, 'NOT_FOUND')
  })

  test('an oversized body is refused before it is parsed', async () => {
    const big = JSON.stringify({ email: 'x@example.test', password: 'p'.repeat(5000) })
    const res = await post('/v1/users', big)
    const json = await res.json()
    expect(json.message).toContain('2048')
    expectProblem(res, json, 400, 'BAD_REQUEST')
    const [{ n }] = (await api.sql`select count(*)::int as n from users where email = 'x@example.test'`) as unknown as [{ n: number }]
    expect(n).toBe(0)
  })

  test('a chunked body is refused at the first byte past the limit, without waiting for its end', async () => {
    // The body never ends: only a parser that counts as it reads can answer (the server's own hard limit is far
    // higher, for object uploads).
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(`{"email":"${'x'.repeat(4096)}`))
      },
    })
    const res = await fetch(`${api.url}/v1/users`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit)
    const json = await res.json()
    expectProblem(res, json, 400, 'BAD_REQUEST')
    expect(json.message).toContain('2048')
  }, 15_000)

  test('a sane inbound X-Request-Id is echoed; an unsafe one is replaced', async () => {
    const echoed = await fetch(`${api.url}/v1/storage-regions`, { headers: { 'x-request-id': 'trace-abc.123' } })
    expect(echoed.headers.get('x-request-id')).toBe('trace-abc.123')
    expect((await echoed.json()).meta.requestId).toBe('trace-abc.123')
    const replaced = await fetch(`${api.url}/v1/storage-regions`, { headers: { 'x-request-id': 'bad id <script>' } })
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })

  test('every response carries X-Request-Id, errors included', async () => {
    for (const res of [await fetch(`${api.url}/healthz`), await fetch(`${api.url}/v1/nope`), await post('/v1/users', '{')]) {
      expect(res.headers.get('x-request-id')).toBeTruthy()
    }
  })
})
