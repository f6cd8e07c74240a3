// Server-side request forgery through a tenant's SSO connection: the issuer is a URL a tenant owner types, and
// the API fetches it. With the outbound allow-list off (production), an issuer that lands on our own network is
// refused before any socket is opened, and whatever a provider answers is never echoed to the caller.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Provider from 'oidc-provider'
import { startApi, type TestApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'

let strict: TestApi // allow-list off, as in production
let lenient: TestApi // the test platform's allow-list: loopback providers are reachable
let internal: ReturnType<typeof Bun.serve>
let elsewhere: ReturnType<typeof Bun.serve>
const hits: string[] = []
const elsewhereHits: string[] = []
const BANNER = 'acme-internal-admin v3.1 (db01.corp:5432)'

beforeAll(async () => {
  strict = await startApi({ OUTBOUND_ALLOW_HOSTS: '', OUTBOUND_ALLOW_PRIVATE_CIDRS: '' })
  lenient = await startApi({ OUTBOUND_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32' })
  // Another loopback address, outside the lenient allow-list: where a provider's metadata may point the later calls.
  elsewhere = Bun.serve({
    port: 0,
    hostname: '127.0.0.2',
    fetch: (req) => {
      elsewhereHits.push(new URL(req.url).pathname)
      return Response.json({})
    },
  })
  // Stands for a service inside our network that must never be reachable through a tenant's URL.
  internal = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) => {
      const url = new URL(req.url)
      hits.push(url.pathname)
      if (url.pathname === '/idp/.well-known/openid-configuration') return Response.json(metadataPointingElsewhere(url.origin))
      return new Response(BANNER, { status: 500 })
    },
  })
})
afterAll(async () => {
  internal?.stop(true)
  elsewhere?.stop(true)
  await strict?.stop()
  await lenient?.stop()
})

/** Discovery is allowed, but the token endpoint and key set it names are not. */
function metadataPointingElsewhere(origin: string) {
  const other = `http://127.0.0.2:${elsewhere.port}`
  return {
    issuer: `${origin}/idp`,
    authorization_endpoint: `${origin}/idp/auth`,
    token_endpoint: `${other}/token`,
    jwks_uri: `${other}/jwks`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
  }
}

async function startWith(api: TestApi, issuer: string) {
  const owner = await tenantOwner(api.url)
  const created = await owner.client.post('/tenants/current/sso-connections', { issuer, clientId: 'c', clientSecret: 's' })
  expect(created.status).toBe(201)
  const res = await fetch(`${api.url}/v1/auth/sso/${created.json.data.id}/start`, { redirect: 'manual' })
  return { status: res.status, body: (await res.json()) as { code: string; message: string } }
}

describe('SSO issuer on our own network (allow-list off)', () => {
  const forms = [
    ['dotted loopback', (p: number) => `http://127.0.0.1:${p}`],
    ['decimal loopback', (p: number) => `http://2130706433:${p}`],
    ['hex loopback', (p: number) => `http://0x7f.0.0.1:${p}`],
    ['IPv4-mapped IPv6 loopback', (p: number) => `http://[::ffff:127.0.0.1]:${p}`],
    ['a name resolving to loopback', (p: number) => `http://localhost:${p}`],
  ] as const
  for (const [name, issuer] of forms) {
    test(`${name}: refused before any request, without saying what it reached`, async () => {
      hits.length = 0
      const res = await startWith(strict, issuer(internal.port!))
      expect(hits).toEqual([])
      expect(res.status).toBe(400)
      expect(res.body.code).toBe('OAUTH_EXCHANGE_FAILED')
      expect(res.body.message).toBe('The identity provider could not be reached or gave an unusable answer')
    })
  }
})

describe('provider answers are not echoed', () => {
  test('a failed discovery says nothing of what the provider sent', async () => {
    hits.length = 0
    const res = await startWith(lenient, `http://127.0.0.1:${internal.port}`)
    expect(hits).toEqual(['/.well-known/openid-configuration'])
    expect(res.status).toBe(400)
    expect(res.body.message).toBe('The identity provider could not be reached or gave an unusable answer')
    expect(JSON.stringify(res.body)).not.toContain('500')
  })

  test("a failed code exchange says nothing of the provider's error text", async () => {
    const { createServer } = await import('node:http')
    const http = createServer()
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const issuer = `http://127.0.0.1:${(http.address() as { port: number }).port}`
    const provider = new Provider(issuer, {
      clients: [
        { client_id: 'c', client_secret: 's', redirect_uris: [`${lenient.url}/v1/auth/sso/callback`], token_endpoint_auth_method: 'client_secret_basic' },
      ],
      cookies: { keys: ['k'] },
    })
    http.on('request', provider.callback())
    try {
      const owner = await tenantOwner(lenient.url)
      const c = (await owner.client.post('/tenants/current/sso-connections', { issuer, clientId: 'c', clientSecret: 's' })).json.data
      const start = await fetch(`${lenient.url}/v1/auth/sso/${c.id}/start`, { redirect: 'manual' })
      expect(start.status).toBe(302)
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!
      const cookie = start.headers.get('set-cookie')!.split(';')[0]!
      const res = await fetch(`${lenient.url}/v1/auth/sso/callback?code=bogus&state=${state}&iss=${encodeURIComponent(issuer)}`, {
        redirect: 'manual',
        headers: { cookie },
      })
      const body = (await res.json()) as { code: string; message: string }
      expect(body.code).toBe('OAUTH_EXCHANGE_FAILED')
      expect(body.message).toBe('The identity provider did not complete the sign-in')
    } finally {
      http.close()
    }
  })

  test('the token endpoint a provider names goes through the guard too', async () => {
    elsewhereHits.length = 0
    const owner = await tenantOwner(lenient.url)
    const issuer = `http://127.0.0.1:${internal.port}/idp`
    const c = (await owner.client.post('/tenants/current/sso-connections', { issuer, clientId: 'c', clientSecret: 's' })).json.data
    const start = await fetch(`${lenient.url}/v1/auth/sso/${c.id}/start`, { redirect: 'manual' })
    expect(start.status).toBe(302)
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!
    const cookie = start.headers.get('set-cookie')!.split(';')[0]!
    const res = await fetch(`${lenient.url}/v1/auth/sso/callback?code=x&state=${state}`, { redirect: 'manual', headers: { cookie } })
    expect(((await res.json()) as { code: string }).code).toBe('OAUTH_EXCHANGE_FAILED')
    expect(elsewhereHits).toEqual([])
  })
})
