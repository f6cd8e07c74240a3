import { describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { httpConventions } from '../../api/http/plugin'
import { isWellFormedPat, newPat } from '../../api/identity/tokens'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { patFor, signedUpUser, tenantOwner } from '../support/fixtures'

const api = useApi()

describe('authentication plugin', () => {
  test('no credential, a garbage token or an unknown PAT: 401 UNAUTHORIZED, never a TOKEN_* code', async () => {
    const anon = new Client(api.url)
    expect((await anon.get('/tokens/self')).json.code).toBe('UNAUTHORIZED')
    for (const token of ['garbage', newPat().token, `rcp_ses_${'a'.repeat(43)}`]) {
      const res = await anon.withBearer(token).get('/tokens/self')
      expect(res.status).toBe(401)
      expect(res.json.code).toBe('UNAUTHORIZED')
    }
    const basic = await fetch(`${api.url}/v1/tokens/self`, { headers: { authorization: 'Basic dXNlcjpwdw==' } })
    expect((await basic.json()).code).toBe('UNAUTHORIZED')
  })

  test('revoked and expired PATs answer their TOKEN_* code on the very next use', async () => {
    const { client } = await tenantOwner(api.url)
    const revoked = await patFor(client, ['tenant:read'])
    const expired = await patFor(client, ['tenant:read'])
    const anon = new Client(api.url)
    expect((await anon.withBearer(revoked.token).get('/tokens/self')).status).toBe(200)
    await api.sql`update api_keys set revoked_at = now() where id = ${revoked.id}`
    await api.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${expired.id}`
    await api.deps.pats.fence() // direct SQL has no fence of its own (docs/api.md, PAT cache); the API's revocation does
    expect((await anon.withBearer(revoked.token).get('/tokens/self')).json.code).toBe('TOKEN_REVOKED')
    expect((await anon.withBearer(expired.token).get('/tokens/self')).json.code).toBe('TOKEN_EXPIRED')
  })

  test('PATs are well-formed with a checksum, and only their SHA-256 is stored', async () => {
    const { client } = await tenantOwner(api.url)
    const { token, id } = await patFor(client, ['tenant:read'])
    expect(isWellFormedPat(token)).toBe(true)
    expect(isWellFormedPat(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'))).toBe(false)
    const [row] = await api.sql`select token_hash, display_prefix from api_keys where id = ${id}`
    expect(Buffer.from(row!.token_hash).toString('hex')).toBe(new Bun.CryptoHasher('sha256').update(token).digest('hex'))
    const dump = JSON.stringify(await api.sql`select * from api_keys where id = ${id}`)
    expect(dump).not.toContain(token)
    expect(token.startsWith(row!.display_prefix)).toBe(true)
  })

  test('GET /tokens/self describes a PAT and a session', async () => {
    const { client, userId, tenantId } = await tenantOwner(api.url)
    const { token } = await patFor(client, ['tenant:read', 'apikey:read'])
    const viaPat = await new Client(api.url).withBearer(token).get('/tokens/self')
    expect(viaPat.json.data).toMatchObject({
      tenantId,
      userId,
      credentialClass: 'personal_access_token',
      grantCeiling: ['tenant:read', 'apikey:read'],
      projectScope: null,
    })
    expect(viaPat.json.data.effectivePermissions.sort()).toEqual(['apikey:read', 'tenant:read'])
    const viaSession = await client.get('/tokens/self')
    expect(viaSession.json.data).toMatchObject({ credentialClass: 'session', grantCeiling: null, tenantId })
    expect(viaSession.json.data.effectivePermissions).toContain('tenant:manage')
  })

  test('CSRF: cookie calls need the session-bound header, bearer calls do not', async () => {
    const { client } = await tenantOwner(api.url)
    const csrf = client.csrf!
    client.csrf = undefined
    const missing = await client.patch('/users/me', { displayName: 'x' })
    expect(missing.status).toBe(400)
    expect(missing.json.code).toBe('CSRF_INVALID')
    const other = await tenantOwner(api.url)
    expect((await client.patch('/users/me', { displayName: 'x' }, { 'x-csrf-token': other.client.csrf! })).json.code).toBe('CSRF_INVALID')
    expect((await client.patch('/users/me', { displayName: 'x' }, { 'x-csrf-token': csrf })).status).toBe(200)
    // GET needs no CSRF token.
    expect((await client.get('/users/me')).status).toBe(200)
    // The same session token as a bearer needs none: a browser cannot be tricked into sending it.
    const bearer = new Client(api.url).withBearer(client.cookie!.split('=')[1]!)
    expect((await bearer.patch('/users/me', { displayName: 'y' })).status).toBe(200)
  })

  test('tenant resolution: no membership is TENANT_REQUIRED; a mismatched X-Tenant-Id is TENANT_CONTEXT_MISMATCH', async () => {
    const lone = await signedUpUser(api.url)
    const res = await lone.client.patch('/users/me', { displayName: 'x' })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('TENANT_REQUIRED')
    const { client } = await tenantOwner(api.url)
    const mismatch = await client.patch('/users/me', { displayName: 'x' }, { 'x-tenant-id': crypto.randomUUID() })
    expect(mismatch.json.code).toBe('TENANT_CONTEXT_MISMATCH')
  })

  test('disabled and expired memberships are 403 MEMBERSHIP_DISABLED / MEMBERSHIP_EXPIRED', async () => {
    const { client, membershipId } = await tenantOwner(api.url)
    const { token } = await patFor(client, ['tenant:read'])
    const pat = new Client(api.url).withBearer(token)
    // Direct SQL, as an operator would: it has no fence of its own, so wait one (docs/api.md, PAT cache).
    await api.sql`update memberships set status = 'disabled' where id = ${membershipId}`
    await api.deps.pats.fence()
    expect((await pat.patch('/users/me', { displayName: 'x' })).json.code).toBe('MEMBERSHIP_DISABLED')
    await api.sql`update memberships set status = 'active', expires_at = now() - interval '1 minute' where id = ${membershipId}`
    await api.deps.pats.fence()
    expect((await pat.patch('/users/me', { displayName: 'x' })).json.code).toBe('MEMBERSHIP_EXPIRED')
  })

  test('a PAT never exceeds its scopes; PERMISSION_NOT_DECLARED (the role would allow it) lists the alternatives', async () => {
    const { client } = await tenantOwner(api.url)
    const { token } = await patFor(client, ['tenant:read'])
    const pat = new Client(api.url).withBearer(token)
    const denied = await pat.post('/api-keys', { name: 'escalate', scopes: ['tenant:read'] })
    expect(denied.status).toBe(403)
    expect(denied.json).toMatchObject({ code: 'PERMISSION_NOT_DECLARED', message: expect.stringContaining('apikey:write') })

    const app = new Elysia()
      .use(httpConventions(api.deps))
      .get('/v1/either', () => ({ data: 'ok' }), { auth: ['apikey:read', 'apikey:manage'], errors: ['A400'] })
      .get('/v1/manage', () => ({ data: 'ok' }), { auth: ['billing:write', 'apikey:manage'], errors: ['A400'] })
      .listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const base = `http://127.0.0.1:${app.server!.port}/v1`
      const h = { authorization: `Bearer ${token}` }
      const either = await fetch(`${base}/either`, { headers: h })
      expect(either.status).toBe(403)
      expect(await either.json()).toMatchObject({ code: 'PERMISSION_NOT_DECLARED', message: expect.stringContaining('any of: apikey:read, apikey:manage') })
    } finally {
      await app.stop(true)
    }
  })

  test('the credential is judged before the body: a missing one is 401 and a short permission 403, whatever the body holds', async () => {
    const invalid = { name: 42, scopes: 'not a list' }
    const anonymous = await new Client(api.url).post('/api-keys', invalid)
    expect({ status: anonymous.status, code: anonymous.json.code }).toEqual({ status: 401, code: 'UNAUTHORIZED' })
    const { client } = await tenantOwner(api.url)
    const { token } = await patFor(client, ['tenant:read'])
    const short = await new Client(api.url).withBearer(token).post('/api-keys', invalid)
    expect({ status: short.status, code: short.json.code }).toEqual({ status: 403, code: 'PERMISSION_NOT_DECLARED' })
    const allowed = await new Client(api.url).withBearer((await patFor(client, ['apikey:write', 'tenant:read'])).token).post('/api-keys', invalid)
    expect({ status: allowed.status, code: allowed.json.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' })
  })

  test('scopes beyond the grant ceiling are refused at creation', async () => {
    const { client } = await tenantOwner(api.url)
    const { token } = await patFor(client, ['apikey:write', 'tenant:read'])
    const res = await new Client(api.url).withBearer(token).post('/api-keys', { name: 'wider', scopes: ['tenant:manage'] })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('INVALID_PERMISSION_OVERLAY')
  })

  test('a route raising a code outside its declared sets answers 500, not the undeclared code', async () => {
    const app = new Elysia()
      .use(httpConventions(api.deps))
      .get(
        '/v1/undeclared',
        () => {
          throw new (require('../../api/platform/errors').ApiError)('LEGAL_HOLD_ACTIVE', 'x')
        },
        { public: true, errors: ['A400'] },
      )
      .listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const res = await fetch(`http://127.0.0.1:${app.server!.port}/v1/undeclared`)
      expect(res.status).toBe(500)
      expect((await res.json()).code).toBe('INTERNAL_ERROR')
    } finally {
      await app.stop(true)
    }
  })
})
