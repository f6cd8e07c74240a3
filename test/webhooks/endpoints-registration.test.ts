// Registering webhook endpoints: the signing secret is shown once and then only ever sealed; events come from the
// catalogue; changes are guarded by ETag; rotation keeps the old secret signing for the overlap only.
import { describe, expect, test } from 'bun:test'
import { eventTypes } from '../../api/events/catalogue'
import { findEndpoint, signingSecrets } from '../../api/webhook-endpoints/service'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'

// Two seconds of overlap: long enough to see both secrets, short enough to see the old one go.
const api = useApi({ WEBHOOK_SECRET_OVERLAP_SECONDS: '2', LOG_LEVEL: 'debug' })
const HOOK = 'https://127.0.0.1:9443/hooks/rcp' // the test platform lets loopback through (OUTBOUND_ALLOW_PRIVATE_CIDRS)
const SECRET = /^whsec_[A-Za-z0-9+/]+=*$/

async function register(body: Record<string, unknown> = {}) {
  const owner = await tenantOwner(api.url)
  const res = await owner.client.post('/webhook-endpoints', { url: HOOK, events: ['model_version.ready'], ...body })
  return { owner, res }
}

describe('registration', () => {
  test('201 with the endpoint and a Standard Webhooks secret of 32 random bytes; no later answer carries it', async () => {
    const { owner, res } = await register({
      events: ['model_version.ready', 'storage.provisioned', 'model_version.ready'],
      description: 'ops',
      rateLimitPerSecond: 5,
    })
    expect(res.status).toBe(201)
    const { endpoint, secret } = res.json.data
    expect(secret).toMatch(SECRET)
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64').length).toBe(32)
    expect(endpoint).toMatchObject({
      url: HOOK,
      events: ['model_version.ready', 'storage.provisioned'],
      description: 'ops',
      enabled: true,
      disabledReason: null,
      rateLimitPerSecond: 5,
      tenantId: owner.tenantId,
      previousSecretExpiresAt: null,
    })
    expect(res.headers.get('etag')).toBe('"v1"')
    const later = [
      await owner.client.get(`/webhook-endpoints/${endpoint.id}`),
      await owner.client.get('/webhook-endpoints'),
      await owner.client.patch(`/webhook-endpoints/${endpoint.id}`, { description: 'ops team' }),
      await owner.client.get('/webhook-endpoints?enabled=true'),
    ]
    for (const r of later) {
      expect(r.status).toBe(200)
      expect(r.text).not.toContain(secret)
      expect(r.text).not.toContain(secret.slice('whsec_'.length))
    }
    expect(later[1]!.json.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id])
  })

  test('the secret is sealed in the database (not in plaintext, not its base64 key) and still opens to the same value', async () => {
    const { owner, res } = await register()
    const { endpoint, secret } = res.json.data
    const [row] = await api.sql`select * from webhook_endpoints where id = ${endpoint.id}`
    const dump = JSON.stringify(row, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v))
    const key = Buffer.from(secret.slice(6), 'base64')
    expect(dump).not.toContain(secret)
    expect(dump).not.toContain(secret.slice(6))
    expect(Buffer.from(row!.secret_sealed).includes(key)).toBe(false)
    expect(Buffer.from(row!.secret_sealed).includes(Buffer.from(secret))).toBe(false)
    const stored = (await findEndpoint(api.sql, owner.tenantId, endpoint.id))!
    expect(signingSecrets(api.deps, stored, new Date())).toEqual([secret])
  })

  test('the secret never reaches the logs (debug level, every request logged)', async () => {
    const lines: string[] = []
    const write = process.stdout.write.bind(process.stdout)
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(String(chunk))
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest)
    }) as typeof process.stdout.write
    try {
      const { owner, res } = await register()
      const rotated = await owner.client.post(`/webhook-endpoints/${res.json.data.endpoint.id}/secret-rotations`)
      expect(rotated.status).toBe(201)
      const all = lines.join('')
      expect(all.length).toBeGreaterThan(0)
      for (const s of [res.json.data.secret, rotated.json.data.secret]) {
        expect(all).not.toContain(s)
        expect(all).not.toContain(s.slice(6))
      }
    } finally {
      process.stdout.write = write
    }
  })

  test('an Idempotency-Key retry answers the first registration (same endpoint, one row)', async () => {
    const owner = await tenantOwner(api.url)
    const body = { url: HOOK, events: ['run.finished'] }
    const first = await owner.client.post('/webhook-endpoints', body, { 'idempotency-key': 'register-once' })
    const again = await owner.client.post('/webhook-endpoints', body, { 'idempotency-key': 'register-once' })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json.data.endpoint.id).toBe(first.json.data.endpoint.id)
    expect((await owner.client.get('/webhook-endpoints')).json.data).toHaveLength(1)
  })
})

describe('input', () => {
  test('plain http is a VALIDATION_ERROR on body.url', async () => {
    const { res } = await register({ url: 'http://127.0.0.1:9443/hooks' })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.errors.map((e: { path: string }) => e.path)).toEqual(['body.url'])
  })

  test('a URL with CR, LF, a tab or a fragment is a VALIDATION_ERROR on body.url, at registration and on PATCH', async () => {
    const bad = [`${HOOK}\r\nX-Injected: 1`, 'https://127.0.0.1:9443/ho\noks', 'https://127.0.0.1:9443/ho\toks', `${HOOK}#frag`, `${HOOK}#`]
    const { owner, res: good } = await register()
    const id = good.json.data.endpoint.id
    for (const url of bad) {
      const { res } = await register({ url })
      const patched = await owner.client.patch(`/webhook-endpoints/${id}`, { url })
      for (const [op, r] of [
        ['create', res],
        ['patch', patched],
      ] as const) {
        expect({ url, op, status: r.status, code: r.json.code, paths: r.json.errors?.map((e: { path: string }) => e.path) }).toEqual({
          url,
          op,
          status: 400,
          code: 'VALIDATION_ERROR',
          paths: ['body.url'],
        })
      }
    }
    expect((await owner.client.get(`/webhook-endpoints/${id}`)).json.data.url).toBe(HOOK)
    expect((await owner.client.get('/webhook-endpoints')).json.data).toHaveLength(1)
  })

  test('an unknown event name is a VALIDATION_ERROR naming the item; an empty list too', async () => {
    const { res } = await register({ events: ['model_version.ready', 'storage.provisioned', 'model_version.exploded'] })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.errors).toEqual([{ path: 'body.events.2', message: expect.stringContaining('"model_version.exploded"') }])
    const empty = await register({ events: [] })
    expect(empty.res.status).toBe(400)
    expect(empty.res.json.errors[0].path).toBe('body.events')
  })

  test('rateLimitPerSecond outside 1..1000 is refused', async () => {
    for (const rate of [0, 1001, 2.5]) {
      const { res } = await register({ rateLimitPerSecond: rate })
      expect({ rate, status: res.status, path: res.json.errors?.[0]?.path }).toEqual({ rate, status: 400, path: 'body.rateLimitPerSecond' })
    }
  })

  test('GET /webhook-event-types lists the whole catalogue with each data schema', async () => {
    const res = await fetch(`${api.url}/v1/webhook-event-types`).then((r) => r.json() as Promise<any>)
    expect(res.data.map((t: { type: string }) => t.type)).toEqual(eventTypes)
    const ready = res.data.find((t: { type: string }) => t.type === 'storage.provisioned')
    expect(ready.dataSchema).toMatchObject({ type: 'object', properties: { regionId: { type: 'string' }, buckets: { type: 'array' } } })
  })
})

describe('changes', () => {
  test('PATCH with a stale If-Match is 412 and writes nothing; with the current tag it applies and moves the tag', async () => {
    const { owner, res } = await register()
    const id = res.json.data.endpoint.id
    const ok = await owner.client.patch(`/webhook-endpoints/${id}`, { events: ['run.finished'], rateLimitPerSecond: 10 }, { 'if-match': '"v1"' })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('etag')).toBe('"v2"')
    expect(ok.json.data).toMatchObject({ events: ['run.finished'], rateLimitPerSecond: 10 })
    const stale = await owner.client.patch(`/webhook-endpoints/${id}`, { description: 'late' }, { 'if-match': '"v1"' })
    expect(stale.status).toBe(412)
    expect(stale.json.code).toBe('PRECONDITION_FAILED')
    expect((await owner.client.get(`/webhook-endpoints/${id}`)).json.data.description).toBeNull()
    const staleDelete = await owner.client.delete(`/webhook-endpoints/${id}`, { 'if-match': '"v1"' })
    expect(staleDelete.status).toBe(412)
    const cleared = await owner.client.patch(`/webhook-endpoints/${id}`, { rateLimitPerSecond: null })
    expect(cleared.json.data.rateLimitPerSecond).toBeNull()
  })

  test('disabling by hand records "manual"; re-enabling clears the reason; the enabled filter follows', async () => {
    const { owner, res } = await register()
    const id = res.json.data.endpoint.id
    const off = await owner.client.patch(`/webhook-endpoints/${id}`, { enabled: false })
    expect(off.json.data).toMatchObject({ enabled: false, disabledReason: 'manual', disabledAt: expect.any(String) })
    expect((await owner.client.get('/webhook-endpoints?enabled=true')).json.data).toEqual([])
    expect((await owner.client.get('/webhook-endpoints?enabled=false')).json.data.map((e: { id: string }) => e.id)).toEqual([id])
    const on = await owner.client.patch(`/webhook-endpoints/${id}`, { enabled: true })
    expect(on.json.data).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null })
  })

  test('DELETE removes it: 200 {removed: true}, then 404', async () => {
    const { owner, res } = await register()
    const id = res.json.data.endpoint.id
    const gone = await owner.client.delete(`/webhook-endpoints/${id}`)
    expect(gone.status).toBe(200)
    expect(gone.json.data).toEqual({ removed: true })
    expect((await owner.client.get(`/webhook-endpoints/${id}`)).status).toBe(404)
    expect((await owner.client.delete(`/webhook-endpoints/${id}`)).status).toBe(404)
  })
})

describe('rotation', () => {
  test('a new secret once; both sign during the overlap (new first), only the new one after it', async () => {
    const { owner, res } = await register()
    const { endpoint, secret: old } = res.json.data
    const rotated = await owner.client.post(`/webhook-endpoints/${endpoint.id}/secret-rotations`)
    expect(rotated.status).toBe(201)
    const { secret: fresh, previousSecretExpiresAt } = rotated.json.data
    expect(fresh).toMatch(SECRET)
    expect(fresh).not.toBe(old)
    expect(rotated.json.data.endpoint.previousSecretExpiresAt).toBe(previousSecretExpiresAt)
    expect((await owner.client.get(`/webhook-endpoints/${endpoint.id}`)).text).not.toContain(fresh)

    const row = (await findEndpoint(api.sql, owner.tenantId, endpoint.id))!
    const expiry = new Date(previousSecretExpiresAt).getTime()
    expect(signingSecrets(api.deps, row, new Date(expiry - 1000))).toEqual([fresh, old])
    expect(signingSecrets(api.deps, row, new Date(expiry + 1))).toEqual([fresh])
    // And by the clock: once the configured overlap has passed, the old secret is gone.
    await Bun.sleep(Math.max(0, expiry - Date.now()) + 50)
    expect(signingSecrets(api.deps, row, new Date())).toEqual([fresh])
    expect((await owner.client.get(`/webhook-endpoints/${endpoint.id}`)).json.data.previousSecretExpiresAt).toBeNull()
  })
})
