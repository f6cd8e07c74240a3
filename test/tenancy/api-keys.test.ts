import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApi, type TestApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
import { bearer, memberOf } from './members'

let api: TestApi
let replica: TestApi
beforeAll(async () => {
  ;[api, replica] = await Promise.all([startApi(), startApi()])
})
afterAll(async () => {
  await Promise.all([api.stop(), replica.stop()])
})

describe('GET /api-keys', () => {
  test('scope self lists your keys in this tenant; scope tenant needs apikey:manage', async () => {
    const owner = await tenantOwner(api.url)
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const mine = [await patFor(owner.client, ['tenant:read']), await patFor(owner.client, ['apikey:read'])]
    const theirs = await patFor(viewer.client, ['tenant:read'])
    const self = await owner.client.get('/api-keys')
    expect(self.status).toBe(200)
    expect(self.json.data.map((k: any) => k.id)).toEqual([mine[1]!.id, mine[0]!.id])
    expect(self.json.data[0]).toMatchObject({ tenantId: owner.tenantId, userId: owner.userId, revokedAt: null, scopes: ['apikey:read'] })
    for (const k of mine) expect(self.text).not.toContain(k.token)
    const tenant = await owner.client.get('/api-keys?scope=tenant&pageSize=2')
    expect(tenant.json.data.map((k: any) => k.id)).toEqual([theirs.id, mine[1]!.id])
    const rest = await owner.client.get(`/api-keys?scope=tenant&pageSize=2&pageToken=${encodeURIComponent(tenant.json.nextPageToken)}`)
    expect(rest.json.data.map((k: any) => k.id)).toEqual([mine[0]!.id])
    expect(rest.json.nextPageToken).toBeUndefined()
    expect((await owner.client.get(`/api-keys?scope=self&pageToken=${encodeURIComponent(tenant.json.nextPageToken)}`)).json.code).toBe(
      'PAGE_TOKEN_QUERY_MISMATCH',
    )
    expect((await owner.client.get('/api-keys?pageSize=101')).json.code).toBe('PAGE_SIZE_TOO_LARGE')

    expect((await viewer.client.get('/api-keys')).json.data.map((k: any) => k.id)).toEqual([theirs.id])
    const denied = await viewer.client.get('/api-keys?scope=tenant')
    expect(denied.status).toBe(403)
    expect(denied.json).toMatchObject({ code: 'PERMISSION_DENIED', message: 'This operation requires apikey:manage' })
    const narrow = await bearer(api.url, (await patFor(owner.client, ['tenant:read'])).token).get('/api-keys')
    expect(narrow.status).toBe(403)
    // The owner's role gives both; the token declares neither.
    expect(narrow.json).toMatchObject({ code: 'PERMISSION_NOT_DECLARED', message: expect.stringContaining('any of: apikey:read, apikey:manage') })
  })
})

describe('revocation', () => {
  test('DELETE /api-keys/{id} answers the revoked summary; the token fails at once, on another replica too', async () => {
    const owner = await tenantOwner(api.url)
    const { id, token } = await patFor(owner.client, ['tenant:read'])
    const onReplica = bearer(replica.url, token)
    expect((await onReplica.get('/tokens/self')).status).toBe(200)
    const asked = Date.now()
    const res = await owner.client.delete(`/api-keys/${id}`)
    const answered = Date.now()
    expect(res.status).toBe(200)
    const revokedAt = res.json.data.revokedAt
    expect(res.json.data.id).toBe(id)
    // Revoked by this request: between asking and the answer, on the one clock the API and the test share.
    expect(new Date(revokedAt).getTime()).toBeGreaterThanOrEqual(asked)
    expect(new Date(revokedAt).getTime()).toBeLessThanOrEqual(answered)
    const again = await owner.client.delete(`/api-keys/${id}`)
    expect(again.json.data.revokedAt).toBe(revokedAt)
    const next = await onReplica.get('/tokens/self')
    expect(next.status).toBe(401)
    expect(next.json.code).toBe('TOKEN_REVOKED')
    expect((await owner.client.delete(`/api-keys/${crypto.randomUUID()}`)).json.code).toBe('NOT_FOUND')
    expect((await owner.client.delete('/api-keys/nope')).status).toBe(404)
  })

  test('an expired token fails on its very next use on any replica', async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['tenant:read'], { expiresAt: new Date(Date.now() + 1500).toISOString() })
    expect((await bearer(replica.url, token).get('/tokens/self')).status).toBe(200)
    await Bun.sleep(1600)
    const res = await bearer(replica.url, token).get('/tokens/self')
    expect(res.status).toBe(401)
    expect(res.json.code).toBe('TOKEN_EXPIRED')
  })

  test("others' keys: 404 without apikey:manage, revocable with it", async () => {
    const owner = await tenantOwner(api.url)
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const ownerKey = await patFor(owner.client, ['tenant:read'])
    const viewerKey = await patFor(viewer.client, ['tenant:read'])
    expect((await viewer.client.delete(`/api-keys/${ownerKey.id}`)).status).toBe(404)
    expect((await bearer(api.url, ownerKey.token).get('/tokens/self')).status).toBe(200)
    expect((await owner.client.delete(`/api-keys/${viewerKey.id}`)).json.data.id).toBe(viewerKey.id)
    expect((await bearer(api.url, viewerKey.token).get('/tokens/self')).json.code).toBe('TOKEN_REVOKED')
  })

  test('POST /api-keys/memberships/{id}/revocations revokes every live key of the member (apikey:manage)', async () => {
    const owner = await tenantOwner(api.url)
    const m = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const keys = [await patFor(m.client, ['tenant:read']), await patFor(m.client, ['apikey:read'])]
    await m.client.delete(`/api-keys/${keys[1]!.id}`)
    const ownerKey = await patFor(owner.client, ['tenant:read'])
    const denied = await m.client.post(`/api-keys/memberships/${m.membershipId}/revocations`)
    expect(denied.json.code).toBe('PERMISSION_DENIED')
    const res = await owner.client.post(`/api-keys/memberships/${m.membershipId}/revocations`, undefined, { 'idempotency-key': crypto.randomUUID() })
    expect(res.status).toBe(201)
    expect(res.json.data).toEqual({ membershipId: m.membershipId, revokedCount: 1 })
    for (const k of keys) expect((await bearer(replica.url, k.token).get('/tokens/self')).json.code).toBe('TOKEN_REVOKED')
    expect((await bearer(api.url, ownerKey.token).get('/tokens/self')).status).toBe(200)
    expect((await owner.client.post(`/api-keys/memberships/${crypto.randomUUID()}/revocations`)).json.code).toBe('NOT_FOUND')
  })
})

describe('lastUsedAt', () => {
  test('is written in one UPDATE per flush interval, not one per request', async () => {
    const batched = await startApi({ PAT_LAST_USED_FLUSH_SECONDS: '1' })
    batched.deps.lastUsed.start() // as api/main.ts does
    const owner = await tenantOwner(batched.url)
    const keys = await Promise.all([1, 2, 3].map(() => patFor(owner.client, ['tenant:read'])))
    // Counts UPDATE statements that touch this tenant's keys (a statement trigger over the changed rows). The count
    // lives in a schema of this test's own: the files beside it that dump every table of `public` must not find a
    // table that is dropped before they read it.
    const t = owner.tenantId.replaceAll('-', '')
    const own = `pat_count_${t}`
    await batched.sql.unsafe(`create schema ${own}; create table ${own}.updates (n int not null)`)
    await batched.sql.unsafe(`create function ${own}.count() returns trigger language plpgsql as $$ begin
      if exists (select 1 from changed where tenant_id = '${owner.tenantId}') then insert into ${own}.updates values (1); end if; return null; end $$`)
    await batched.sql.unsafe(
      `create trigger count_${t} after update on api_keys referencing new table as changed for each statement execute function ${own}.count()`,
    )
    try {
      // A fixed number of requests, however long they take; the bound on UPDATEs is the number of flush intervals
      // the test itself saw pass, so a slow machine loosens it only as much as the recorder's own timer allows.
      const started = Date.now()
      let lastRound = started
      let requests = 0
      for (let round = 0; round < 50; round++) {
        lastRound = Date.now()
        await Promise.all(keys.map((k) => bearer(batched.url, k.token).get('/tokens/self')))
        requests += keys.length
      }
      // Done when the last round's uses are written: the flush that follows them.
      const flushed = async () =>
        (
          await batched.sql<{ at: Date | null }[]>`
        select last_used_at as at from api_keys where id in ${batched.sql(keys.map((k) => k.id))}`
        ).every((r) => r.at !== null && r.at.getTime() >= lastRound)
      while (!(await flushed())) await Bun.sleep(50)
      const elapsed = Date.now() - started
      const [{ n }] = (await batched.sql.unsafe(`select count(*)::int as n from ${own}.updates`)) as unknown as [{ n: number }]
      expect(requests).toBe(150)
      expect(n).toBeGreaterThanOrEqual(1)
      // At most one per tick of the recorder's timer while the test ran (a tick either end of `elapsed`), whatever
      // the request count; one UPDATE per request would be 150.
      expect(n).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1)
      expect(n).toBeLessThan(requests)
      const listed = await owner.client.get('/api-keys')
      for (const k of listed.json.data) {
        const at = new Date(k.lastUsedAt).getTime()
        expect(at).toBeGreaterThanOrEqual(lastRound)
        expect(at).toBeLessThanOrEqual(Date.now())
      }
    } finally {
      await batched.sql.unsafe(`drop trigger count_${t} on api_keys; drop schema ${own} cascade`)
      await batched.stop()
    }
  })
})
