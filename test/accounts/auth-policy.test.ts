import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { tenantOwner, uniqueEmail } from '../support/fixtures'
import { memberOf } from './helpers'

const api = useApi()

describe('tenant auth policy', () => {
  test('GET answers the defaults at version 1; PATCH with If-Match moves the ETag; stale is 412 and writes nothing', async () => {
    const { client, tenantId } = await tenantOwner(api.url)
    const got = await client.get('/tenants/current/auth-policy')
    expect(got.status).toBe(200)
    expect(got.headers.get('etag')).toBe('"v1"')
    expect(got.json.data).toEqual({
      tenantId,
      mfaRequired: false,
      allowedSignInMethods: ['password', 'passkey', 'sso'],
      passwordMinLength: 8,
      sessionAbsoluteMinutes: 7 * 24 * 60,
      sessionIdleMinutes: 24 * 60,
      ssoEnforced: false,
      allowedEmailDomains: [],
      updatedAt: null,
    })
    const patched = await client.patch(
      '/tenants/current/auth-policy',
      { passwordMinLength: 12, allowedEmailDomains: ['Robots.Example'] },
      { 'if-match': '"v1"' },
    )
    expect(patched.status).toBe(200)
    expect(patched.headers.get('etag')).toBe('"v2"')
    expect(patched.json.data).toMatchObject({ passwordMinLength: 12, allowedEmailDomains: ['robots.example'], mfaRequired: false })
    expect((await client.get('/tenants/current/auth-policy')).headers.get('etag')).toBe('"v2"')

    const stale = await client.patch('/tenants/current/auth-policy', { passwordMinLength: 20 }, { 'if-match': '"v1"' })
    expect(stale.status).toBe(412)
    expect(stale.json.code).toBe('PRECONDITION_FAILED')
    expect((await client.get('/tenants/current/auth-policy')).json.data.passwordMinLength).toBe(12)
    expect((await client.patch('/tenants/current/auth-policy', { mfaRequired: false }, { 'if-match': '*' })).headers.get('etag')).toBe('"v3"')
    expect((await client.patch('/tenants/current/auth-policy', {}, { 'if-match': 'v3' })).json.code).toBe('IF_MATCH_INVALID')
  })

  test('validation: length bounds, idle within absolute, known methods', async () => {
    const { client } = await tenantOwner(api.url)
    for (const body of [
      { passwordMinLength: 7 },
      { passwordMinLength: 65 },
      { sessionIdleMinutes: 600, sessionAbsoluteMinutes: 60 },
      { allowedSignInMethods: ['carrier-pigeon'] },
      { allowedSignInMethods: [] },
      { allowedEmailDomains: ['not a domain'] },
    ]) {
      const res = await client.patch('/tenants/current/auth-policy', body)
      expect({ body, code: res.json.code }).toEqual({ body, code: 'VALIDATION_ERROR' })
    }
    expect((await client.patch('/tenants/current/auth-policy', { passwordMinLength: 64 })).status).toBe(200)
  })

  test('needs tenant:manage', async () => {
    const owner = await tenantOwner(api.url)
    const viewer = await memberOf(api.url, owner.client, 'viewer')
    for (const res of [
      await viewer.client.get('/tenants/current/auth-policy'),
      await viewer.client.patch('/tenants/current/auth-policy', { mfaRequired: true }),
    ]) {
      expect(res.status).toBe(403)
      expect(res.json.code).toBe('PERMISSION_DENIED')
    }
  })

  test('allowed email domains bound whom an administrator can provision', async () => {
    const { client } = await tenantOwner(api.url)
    expect((await client.patch('/tenants/current/auth-policy', { allowedEmailDomains: ['robots.example'] })).status).toBe(200)
    const outside = await client.post('/users', { mode: 'invite', role: 'viewer', email: uniqueEmail() })
    expect(outside.status).toBe(400)
    expect(outside.json.code).toBe('VALIDATION_ERROR')
    const inside = await client.post('/users', { mode: 'invite', role: 'viewer', email: `m-${crypto.randomUUID()}@robots.example` })
    expect(inside.status).toBe(201)
  })
})
