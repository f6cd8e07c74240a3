// Endpoints belong to one tenant: another tenant's owner sees and changes nothing of them, members without
// tenant:manage reach none of the routes, and the delivery side's lookups are scoped the same way.
import { describe, expect, test } from 'bun:test'
import { activityContext } from '../../api/identity/context'
import { PERMISSIONS } from '../../api/identity/permissions'
import { disableEndpoint, endpointsForEvent, findEndpoint } from '../../api/webhook-endpoints/service'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
import { bearer, memberOf } from '../tenancy/members'
import { sealAudit } from '../support/audit'

const api = useApi()
const delivery = activityContext('webhook-delivery/test')
// The outbox without the audit trail's own events (every recorded change adds one).
const eventsOf = (tenantId: string) => api.sql`select type, data from events where tenant_id = ${tenantId} and type <> 'audit.entry'`

async function withEndpoint(events = ['run.finished']) {
  const owner = await tenantOwner(api.url)
  const res = await owner.client.post('/webhook-endpoints', { url: `https://127.0.0.1/${owner.tenantId}/hook`, events })
  expect(res.status).toBe(201)
  return { owner, endpoint: res.json.data.endpoint, secret: res.json.data.secret as string }
}

describe('isolation', () => {
  test("another tenant's owner (every permission) gets 404 on every route of the endpoint and an empty list", async () => {
    const a = await withEndpoint()
    const b = await tenantOwner(api.url)
    const other = bearer(api.url, (await patFor(b.client, [...PERMISSIONS])).token)
    const id = a.endpoint.id
    const [before] = await api.sql`select * from webhook_endpoints where id = ${id}`
    const answers = [
      await other.get(`/webhook-endpoints/${id}`),
      await other.patch(`/webhook-endpoints/${id}`, { enabled: false }),
      await other.patch(`/webhook-endpoints/${id}`, { url: 'https://127.0.0.1/b-hook' }, { 'if-match': '*' }),
      await other.post(`/webhook-endpoints/${id}/secret-rotations`),
      await other.delete(`/webhook-endpoints/${id}`),
    ]
    for (const res of answers) {
      expect(res.status).toBe(404)
      expect(res.json.code).toBe('NOT_FOUND')
      expect(res.text).not.toContain(a.endpoint.url)
    }
    const list = await other.get('/webhook-endpoints')
    expect(list.json.data).toEqual([])
    const [after] = await api.sql`select * from webhook_endpoints where id = ${id}`
    expect(after).toEqual(before)
    // The delivery side's lookups are tenant-scoped too.
    expect(await findEndpoint(api.sql, b.tenantId, id)).toBeUndefined()
    expect(await endpointsForEvent(api.sql, b.tenantId, 'run.finished')).toHaveLength(0)
  })

  test('members without tenant:manage are refused with 403 on every route', async () => {
    const a = await withEndpoint()
    for (const role of ['researcher', 'viewer', 'billing_admin']) {
      const m = await memberOf(api.url, api.sql, a.owner.tenantId, role)
      const calls = [
        await m.client.get('/webhook-endpoints'),
        await m.client.post('/webhook-endpoints', { url: 'https://127.0.0.1/x', events: ['run.finished'] }),
        await m.client.get(`/webhook-endpoints/${a.endpoint.id}`),
        await m.client.patch(`/webhook-endpoints/${a.endpoint.id}`, { enabled: false }),
        await m.client.post(`/webhook-endpoints/${a.endpoint.id}/secret-rotations`),
        await m.client.delete(`/webhook-endpoints/${a.endpoint.id}`),
      ]
      expect({ role, statuses: calls.map((c) => c.status) }).toEqual({ role, statuses: [403, 403, 403, 403, 403, 403] })
    }
  })
})

describe('what the delivery side uses', () => {
  test('endpointsForEvent: enabled endpoints of the tenant subscribed to the type, oldest first', async () => {
    const a = await withEndpoint(['run.finished', 'storage.provisioned'])
    const second = (await a.owner.client.post('/webhook-endpoints', { url: 'https://127.0.0.1/second', events: ['run.finished'] })).json.data.endpoint
    const third = (await a.owner.client.post('/webhook-endpoints', { url: 'https://127.0.0.1/third', events: ['run.finished'] })).json.data.endpoint
    await a.owner.client.patch(`/webhook-endpoints/${third.id}`, { enabled: false })
    const ids = async (type: string) => (await endpointsForEvent(api.sql, a.owner.tenantId, type)).map((e) => e.id)
    expect(await ids('run.finished')).toEqual([a.endpoint.id, second.id])
    expect(await ids('storage.provisioned')).toEqual([a.endpoint.id])
    expect(await ids('model_version.ready')).toEqual([])
  })

  test('disableEndpoint disables an enabled endpoint and publishes webhook_endpoint.disabled in the same transaction, once', async () => {
    const a = await withEndpoint()
    const tenantId = a.owner.tenantId
    const row = await api.sql.begin((tx) => disableEndpoint(tx, delivery, tenantId, a.endpoint.id, 'gone'))
    expect(row).toMatchObject({ enabled: false, disabled_reason: 'gone' })
    const again = await api.sql.begin((tx) => disableEndpoint(tx, delivery, tenantId, a.endpoint.id, 'failing'))
    expect(again).toBeUndefined()
    expect([...(await eventsOf(tenantId))]).toEqual([
      {
        type: 'webhook_endpoint.disabled',
        data: { endpointId: a.endpoint.id, url: a.endpoint.url, reason: 'gone', disabledAt: row!.disabled_at!.toISOString() },
      },
    ])
    await sealAudit(api.sql)
    const recorded = await api.sql`select actor_type, actor_id, details from audit_log where tenant_id = ${tenantId} and action = 'webhook_endpoint.disabled'`
    expect([...recorded]).toEqual([{ actor_type: 'system', actor_id: 'webhook-delivery/test', details: { reason: 'gone', url: a.endpoint.url } }])
    const shown = (await a.owner.client.get(`/webhook-endpoints/${a.endpoint.id}`)).json.data
    expect(shown).toMatchObject({ enabled: false, disabledReason: 'gone' })
    expect((await a.owner.client.patch(`/webhook-endpoints/${a.endpoint.id}`, { enabled: true })).json.data.disabledReason).toBeNull()
  })

  test('a rolled-back disable leaves the endpoint enabled and publishes nothing', async () => {
    const a = await withEndpoint()
    const tenantId = a.owner.tenantId
    await expect(
      api.sql.begin(async (tx) => {
        await disableEndpoint(tx, delivery, tenantId, a.endpoint.id, 'failing')
        throw new Error('the delivery bookkeeping failed')
      }),
    ).rejects.toThrow('the delivery bookkeeping failed')
    expect((await findEndpoint(api.sql, tenantId, a.endpoint.id))!.enabled).toBe(true)
    expect(await eventsOf(tenantId)).toHaveLength(0)
    await sealAudit(api.sql)
    expect(await api.sql`select 1 from audit_log where tenant_id = ${tenantId} and action = 'webhook_endpoint.disabled'`).toHaveLength(0)
  })
})
