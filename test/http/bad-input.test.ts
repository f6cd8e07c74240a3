// Input a schema cannot describe, and methods a path does not serve: each is a clear 4xx problem, never a 5xx.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'

const api = useApi()

describe('bad input never reaches Postgres as a 500', () => {
  test('a NUL character in a JSON string is 400 VALIDATION_ERROR naming the field', async () => {
    const owner = await tenantOwner(api.url)
    const res = await owner.client.call('PATCH', '/users/me', { raw: '{"displayName":"a\\u0000b"}' })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'body.displayName' }] })
    // Nested too, and the field is untouched.
    const nested = await owner.client.call('POST', '/api-keys', { raw: '{"name":"ok","scopes":["tenant:read\\u0000"]}' })
    expect(nested.json).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'body.scopes.0' }] })
    expect((await owner.client.get('/users/me')).json.data.user.displayName).toBeNull()
  })

  test('an encoded NUL in a query parameter or path is 400 VALIDATION_ERROR naming it', async () => {
    const owner = await tenantOwner(api.url)
    const q = await owner.client.get('/tenants/current/memberships?q=a%00b')
    expect(q.status).toBe(400)
    expect(q.json).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'query.q' }] })
    const login = await fetch(`${api.url}/v1/auth/login-options?email=a%00@example.test`)
    expect(login.status).toBe(400)
    const path = await owner.client.get('/tenants/current/memberships/%00')
    expect(path.status).toBe(400)
  })

  test('a required body that is absent is 400 VALIDATION_ERROR, not an empty change', async () => {
    const owner = await tenantOwner(api.url)
    const manager = owner.client.withBearer((await patFor(owner.client, ['tenant:manage'])).token)
    const endpoint = `/webhook-endpoints/${crypto.randomUUID()}`
    for (const [client, method, path] of [
      [owner.client, 'PATCH', '/users/me'],
      [owner.client, 'PATCH', '/tenants/current/auth-policy'],
      [owner.client, 'POST', '/api-keys'],
      [manager, 'POST', '/webhook-endpoints'],
      [manager, 'PATCH', endpoint],
    ] as const) {
      const res = await client.call(method, path)
      // docs/api.md promises the path `body` for an absent body, whatever the model's root type.
      expect({ method, path, status: res.status, code: res.json?.code, where: res.json?.errors?.map((e: { path: string }) => e.path) }).toEqual({
        method,
        path,
        status: 400,
        code: 'VALIDATION_ERROR',
        where: ['body'],
      })
    }
  })
})

describe('a request target over 16 KiB', () => {
  test('is 431 REQUEST_HEADER_FIELDS_TOO_LARGE as problem+json: a 20 KB page token on a list, a long returnTo', async () => {
    const owner = await tenantOwner(api.url)
    const list = await owner.client.get(`/tenants/current/memberships?pageToken=${'a'.repeat(20_000)}`)
    const sso = await fetch(`${api.url}/v1/auth/sso/${crypto.randomUUID()}/start?returnTo=/${'b'.repeat(20_000)}`, { redirect: 'manual' })
    for (const res of [
      { status: list.status, headers: list.headers, json: list.json },
      { status: sso.status, headers: sso.headers, json: await sso.json().catch(() => null) },
    ]) {
      expect(res.status).toBe(431)
      expect(res.headers.get('content-type')).toBe('application/problem+json')
      expect(res.json).toMatchObject({ status: 431, code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', requestId: res.headers.get('x-request-id') })
    }
    // Just under the limit the same list answers as usual (the page token is refused by its own rule).
    const under = await owner.client.get(`/tenants/current/memberships?pageToken=${'a'.repeat(15_000)}`)
    expect([under.status, under.json.code]).toEqual([400, 'VALIDATION_ERROR'])
  })
})

describe('methods', () => {
  test('a known path asked with a method it does not serve is 405 with Allow, as problem+json', async () => {
    const owner = await tenantOwner(api.url)
    const res = await owner.client.call('PUT', '/users/me', { body: {} })
    expect(res.status).toBe(405)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
    expect(res.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH') // DELETE is the account's erasure
    expect(res.json.code).toBe('METHOD_NOT_ALLOWED')
    const param = await fetch(`${api.url}/v1/tenants/current/memberships/${crypto.randomUUID()}`, { method: 'POST' })
    expect(param.status).toBe(405)
    expect(param.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH')
    expect((await fetch(`${api.url}/v1/no-such-path`, { method: 'PUT' })).status).toBe(404)
  })
})

describe('the OpenAPI document lists every status an operation can answer', () => {
  test('the administrator variant of POST /users documents 401 and 403; public sign-ins their 401', async () => {
    const doc = await (await fetch(`${api.url}/v1/openapi.json`)).json()
    const create = doc.paths['/v1/users'].post.responses
    expect(Object.keys(create)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409', '429']))
    expect(Object.keys(doc.paths['/v1/sessions'].post.responses)).toContain('401')
    expect(Object.keys(doc.paths['/v1/sessions/mfa-challenges/confirmations'].post.responses)).toContain('401')
  })
})
