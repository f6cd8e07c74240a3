import { describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { httpConventions } from '../../api/http/plugin'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, signedUpUser, uniqueEmail, uniqueSlug } from '../support/fixtures'

const api = useApi()

describe('Idempotency-Key', () => {
  test('50 concurrent requests with one key make exactly one tenant', async () => {
    const { client, userId } = await signedUpUser(api.url)
    const slug = uniqueSlug('idem')
    const key = crypto.randomUUID()
    const results = await Promise.all(Array.from({ length: 50 }, () => client.post('/tenants', { name: 'Once', slug }, { 'idempotency-key': key })))
    const [{ n }] = (await api.sql`select count(*)::int as n from tenants where slug = ${slug}`) as unknown as [{ n: number }]
    expect(n).toBe(1)
    const [{ m }] = (await api.sql`select count(*)::int as m from memberships where user_id = ${userId}`) as unknown as [{ m: number }]
    expect(m).toBe(1)
    const created = results.filter((r) => r.status === 201)
    const conflicts = results.filter((r) => r.status === 409)
    expect(created.length + conflicts.length).toBe(50)
    expect(created.length).toBeGreaterThanOrEqual(1)
    // Every 201 is the first response replayed, byte for byte; every 409 says the key was in flight.
    for (const r of created) expect(r.text).toBe(created[0]!.text)
    for (const r of conflicts) expect(r.json.code).toBe('IDEMPOTENCY_CONFLICT')
  })

  test('a repeat replays the first response byte for byte; a different body is a conflict', async () => {
    const { client } = await signedUpUser(api.url)
    const key = crypto.randomUUID()
    const body = { name: 'Replay', slug: uniqueSlug('rep') }
    const first = await client.post('/tenants', body, { 'idempotency-key': key })
    expect(first.status).toBe(201)
    const again = await client.post('/tenants', { slug: body.slug, name: body.name }, { 'idempotency-key': key })
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'))
    const changed = await client.post('/tenants', { ...body, name: 'Other' }, { 'idempotency-key': key })
    expect(changed.status).toBe(409)
    expect(changed.json.code).toBe('IDEMPOTENCY_CONFLICT')
  })

  test('keys are unique per tenant: the same key in another tenant is a new request', async () => {
    const a = await signedUpUser(api.url)
    const b = await signedUpUser(api.url)
    const key = `shared-key-${crypto.randomUUID()}`
    const ra = await a.client.post('/tenants', { name: 'A', slug: uniqueSlug('a') }, { 'idempotency-key': key })
    const rb = await b.client.post('/tenants', { name: 'B', slug: uniqueSlug('b') }, { 'idempotency-key': key })
    expect(ra.status).toBe(201)
    expect(rb.status).toBe(201)
    expect(rb.json.data.tenant.id).not.toBe(ra.json.data.tenant.id)
  })

  test('an expired key is a new request; a first attempt that died frees its key once its lock lapses', async () => {
    const { client } = await signedUpUser(api.url)
    const key = crypto.randomUUID()
    const first = await client.post('/tenants', { name: 'Old', slug: uniqueSlug('old') }, { 'idempotency-key': key })
    expect(first.status).toBe(201)
    await api.sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${key}`
    const reused = await client.post('/tenants', { name: 'New', slug: uniqueSlug('new') }, { 'idempotency-key': key })
    expect(reused.status).toBe(201)
    expect(reused.json.data.tenant.name).toBe('New')

    // Simulate a process that claimed a key and died before answering: the row is in flight with no response.
    const orphan = crypto.randomUUID()
    const body = { name: 'Orphan', slug: uniqueSlug('orph') }
    await client.post('/tenants', body, { 'idempotency-key': orphan })
    await api.sql`update idempotency_keys set state = 'in_flight', response_body = null, locked_until = now() + interval '1 hour' where key = ${orphan}`
    const blocked = await client.post('/tenants', body, { 'idempotency-key': orphan })
    expect(blocked.status).toBe(409)
    expect(blocked.json.code).toBe('IDEMPOTENCY_CONFLICT')
    await api.sql`update idempotency_keys set locked_until = now() - interval '1 second' where key = ${orphan}`
    const retried = await client.post('/tenants', body, { 'idempotency-key': orphan })
    // The retry runs again (the slug is taken by the attempt that did commit) and its answer is recorded.
    expect(retried.json.code).toBe('TENANT_SLUG_CONFLICT')
    const [row] = await api.sql`select state from idempotency_keys where key = ${orphan}`
    expect(row!.state).toBe('completed')
  })

  test('a key over 255 characters or with control characters is 400 IDEMPOTENCY_KEY_INVALID', async () => {
    const { client } = await signedUpUser(api.url)
    for (const key of ['k'.repeat(256), 'has space']) {
      const res = await client.post('/tenants', { name: 'X', slug: uniqueSlug() }, { 'idempotency-key': key })
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('IDEMPOTENCY_KEY_INVALID')
    }
    const ok = await client.post('/tenants', { name: 'X', slug: uniqueSlug() }, { 'idempotency-key': 'k'.repeat(255) })
    expect(ok.status).toBe(201)
  })

  test('public operations: a repeated registration replays, and the stored response is sealed', async () => {
    const email = uniqueEmail('pub')
    const key = crypto.randomUUID()
    const c1 = new Client(api.url)
    const c2 = new Client(api.url)
    const r1 = await c1.post('/users', { email, password: PASSWORD }, { 'idempotency-key': key })
    const r2 = await c2.post('/users', { email, password: PASSWORD }, { 'idempotency-key': key })
    expect(r1.status).toBe(201)
    expect(r2.text).toBe(r1.text)
    expect(r2.headers.get('set-cookie')).toBe(r1.headers.get('set-cookie'))
    const rows = await api.sql`select response_body from idempotency_keys where key = ${key}`
    expect(rows.length).toBe(1)
    const stored = Buffer.from(rows[0]!.response_body).toString('latin1')
    expect(stored).not.toContain(email)
    expect(stored).not.toContain(c1.cookie!.split('=')[1]!)
  })

  test('a 5xx is replayed too, and the handler does not run again', async () => {
    let calls = 0
    const app = new Elysia()
      .use(httpConventions(api.deps))
      .post(
        '/v1/flaky',
        () => {
          calls++
          throw new Error('database exploded')
        },
        { public: true, idempotent: true, errors: ['A400'] },
      )
      .listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const send = () =>
        fetch(`http://127.0.0.1:${app.server!.port}/v1/flaky`, {
          method: 'POST',
          body: '{"a":1}',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
        })
      const key = crypto.randomUUID()
      const first = await send()
      const second = await send()
      expect(first.status).toBe(500)
      expect(second.status).toBe(500)
      expect(await second.text()).toBe(await first.text())
      expect(calls).toBe(1)
    } finally {
      await app.stop(true)
    }
  })
})
