// The audit trail's core: entries written in the change's own transaction, read back per tenant in a window,
// hash-chained so an edit made behind the API is located, and invisible to everyone but the tenant's managers.
import { describe, expect, test } from 'bun:test'
import { recordAudit } from '../../api/audit/service'
import { eventCatalogue } from '../../api/events/catalogue'
import { activityContext } from '../../api/identity/context'
import { useApi } from '../support/api'
import { auditWindow, hourAgo, inAnHour, sealAudit } from '../support/audit'
import { patFor, tenantOwner } from '../support/fixtures'

const api = useApi()

describe('recording', () => {
  test('a token created and revoked is recorded with who, from where, which request, and nothing secret', async () => {
    const owner = await tenantOwner(api.url)
    const created = await owner.client.call('POST', '/api-keys', {
      body: { name: 'ci deploy', scopes: ['model:read'] },
      headers: { 'user-agent': 'audit-test/1.0', 'x-request-id': 'req-audit-1' },
    })
    expect(created.status).toBe(201)
    const keyId = created.json.data.apiKey.id as string
    expect((await owner.client.delete(`/api-keys/${keyId}`)).status).toBe(200)

    const list = await owner.client.get(`/tenants/current/audit-log?${auditWindow()}&targetId=${keyId}`)
    expect(list.status).toBe(200)
    const [revoked, made] = list.json.data
    expect(made).toMatchObject({
      action: 'api_key.created',
      tenantId: owner.tenantId,
      outcome: 'success',
      target: { type: 'api_key', id: keyId },
      actor: { type: 'user', id: owner.userId, label: owner.email },
      ip: '127.0.0.1',
      userAgent: 'audit-test/1.0',
      requestId: 'req-audit-1',
      details: { name: 'ci deploy', scopes: ['model:read'] },
    })
    expect(revoked).toMatchObject({ action: 'api_key.revoked', target: { id: keyId } })
    expect(revoked.seq).toBe(made.seq + 1)
    // Ids are UUIDv7, in the order the entries were made.
    expect(made.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab]/)
    expect(revoked.id > made.id).toBe(true)
    expect(JSON.stringify(list.json.data)).not.toContain(created.json.data.token)
  })

  test('an entry written in a transaction that rolls back is gone with it, and the chain does not move', async () => {
    const owner = await tenantOwner(api.url)
    const head = async () => {
      await sealAudit(api.sql)
      return (await api.sql`select seq from audit_chain_heads where chain = ${owner.tenantId}`)[0]?.seq
    }
    const before = await head()
    await expect(
      api.sql.begin(async (tx) => {
        await recordAudit(tx, activityContext('test/rollback'), { action: 'storage.provisioned', tenantId: owner.tenantId })
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    expect(await head()).toBe(before)
    const rows = await api.sql`
      select 1 from audit_log where tenant_id = ${owner.tenantId} and actor_id = 'test/rollback'
      union all select 1 from audit_inbox where tenant_id = ${owner.tenantId} and actor_id = 'test/rollback'`
    expect(rows.length).toBe(0)
  })

  test('a tenant entry is an audit.entry event in the outbox once the tenant has an endpoint subscribed to it', async () => {
    const owner = await tenantOwner(api.url)
    const eventOf = async (targetId: string) =>
      sealAudit(api.sql).then(
        () => api.sql<{ data: { action: string; target: { id: string } } }[]>`
      select data from events where tenant_id = ${owner.tenantId} and type = 'audit.entry' and data->'target'->>'id' = ${targetId}`,
      )
    const before = await patFor(owner.client, ['model:read'])
    expect([...(await eventOf(before.id))]).toEqual([]) // nobody takes the stream: nothing is queued for nobody
    await api.sql`
      insert into webhook_endpoints (tenant_id, url, events, secret_sealed) values (${owner.tenantId}, 'https://siem.example.test/', '{audit.entry}', '\\x00')`
    const { id } = await patFor(owner.client, ['model:read'])
    const [event] = await eventOf(id)
    expect(event?.data).toMatchObject({ action: 'api_key.created', target: { id } })
    // The seal writes the event in SQL: it must still be what the catalogue promises, and what the API shows.
    expect(eventCatalogue['audit.entry'].data.safeParse(event!.data).error).toBeUndefined()
    const shown = await owner.client.get(`/tenants/current/audit-log?${auditWindow()}&targetId=${id}`)
    expect(event!.data).toEqual(shown.json.data[0])
  })
})

describe('the window', () => {
  test('from and to are required, parsable, ordered and within the maximum', async () => {
    const owner = await tenantOwner(api.url)
    const code = async (q: string) => (await owner.client.get(`/tenants/current/audit-log${q}`)).json.code
    expect(await code('')).toBe('AUDIT_LOG_TIME_RANGE_REQUIRED')
    expect(await code(`?from=${encodeURIComponent(hourAgo())}`)).toBe('AUDIT_LOG_TIME_RANGE_REQUIRED')
    expect(await code('?from=yesterday&to=today')).toBe('AUDIT_LOG_INVALID_TIME_RANGE')
    expect(await code(`?from=${encodeURIComponent(inAnHour())}&to=${encodeURIComponent(hourAgo())}`)).toBe('AUDIT_LOG_INVALID_TIME_RANGE')
    expect(await code('?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).toBe('AUDIT_LOG_WINDOW_TOO_LARGE')
    expect((await owner.client.post('/tenants/current/audit-log/verifications', {})).json.code).toBe('AUDIT_LOG_TIME_RANGE_REQUIRED')
  })

  test('page tokens are bound to the window and filters', async () => {
    const owner = await tenantOwner(api.url)
    for (let i = 0; i < 3; i++) await patFor(owner.client, ['model:read'])
    const q = `${auditWindow()}&action=api_key.&pageSize=2`
    const first = await owner.client.get(`/tenants/current/audit-log?${q}`)
    expect(first.json.data.length).toBe(2)
    const token = first.json.nextPageToken as string
    const second = await owner.client.get(`/tenants/current/audit-log?${q}&pageToken=${token}`)
    expect(second.json?.code).toBeUndefined()
    expect(second.json.data.length).toBe(1)
    expect(second.json.data[0].seq).toBeLessThan(first.json.data[1].seq)
    const other = await owner.client.get(`/tenants/current/audit-log?${auditWindow()}&action=membership.&pageSize=2&pageToken=${token}`)
    expect(other.json.code).toBe('PAGE_TOKEN_QUERY_MISMATCH')
  })
})

describe('tamper evidence', () => {
  test('the table refuses UPDATE, DELETE and TRUNCATE, and so does the inbox of entries waiting to be sealed', async () => {
    const owner = await tenantOwner(api.url)
    await patFor(owner.client, ['model:read'])
    await sealAudit(api.sql)
    await expect(api.sql`update audit_log set action = 'x' where tenant_id = ${owner.tenantId}`).rejects.toThrow(/append-only/)
    await expect(api.sql`delete from audit_log where tenant_id = ${owner.tenantId}`).rejects.toThrow(/append-only/)
    await expect(api.sql`truncate audit_log`).rejects.toThrow(/append-only/)
    // An entry waiting to be sealed no less: only the seal takes it out.
    for (const alter of ['update audit_inbox set action = $1', 'delete from audit_inbox where action = $1', 'truncate audit_inbox']) {
      await expect(
        api.sql.begin(async (tx) => {
          await recordAudit(tx, activityContext('test/inbox'), { action: 'storage.provisioned', tenantId: owner.tenantId })
          await tx.unsafe(alter, alter.startsWith('truncate') ? [] : ['storage.provisioned'])
        }),
      ).rejects.toThrow(/append-only until sealed/)
    }
  })

  test('an entry edited with SQL behind the API is located by the verification', async () => {
    const owner = await tenantOwner(api.url)
    for (let i = 0; i < 4; i++) await patFor(owner.client, ['model:read'])
    const body = { from: hourAgo(), to: inAnHour() }
    const clean = await owner.client.post('/tenants/current/audit-log/verifications', body)
    expect(clean.status).toBe(200)
    expect(clean.json.data).toMatchObject({ intact: true, firstBrokenSeq: null })
    expect(clean.json.data.verified).toBeGreaterThanOrEqual(4) // the four tokens (and tenant.created)
    expect(clean.json.data.head.seq).toBe(clean.json.data.lastSeq)

    const [victim] = await api.sql<
      { seq: number }[]
    >`select seq from audit_log where chain = ${owner.tenantId} and action = 'api_key.created' order by seq limit 1 offset 1`
    await api.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica` // what a database administrator could do: bypass the triggers
      await tx`update audit_log set actor_label = 'someone-else@example.test' where chain = ${owner.tenantId} and seq = ${victim!.seq}`
    })
    const broken = await owner.client.post('/tenants/current/audit-log/verifications', body)
    expect(broken.json.data).toMatchObject({ intact: false, firstBrokenSeq: victim!.seq, verified: clean.json.data.verified })
  })

  test('a deleted entry leaves a gap the verification finds', async () => {
    const owner = await tenantOwner(api.url)
    for (let i = 0; i < 3; i++) await patFor(owner.client, ['model:read'])
    await sealAudit(api.sql)
    const [victim] = await api.sql<{ seq: number }[]>`select max(seq) - 1 as seq from audit_log where chain = ${owner.tenantId}`
    await api.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`
      await tx`delete from audit_log where chain = ${owner.tenantId} and seq = ${victim!.seq}`
    })
    const res = await owner.client.post('/tenants/current/audit-log/verifications', { from: hourAgo(), to: inAnHour() })
    expect(res.json.data).toMatchObject({ intact: false, firstBrokenSeq: victim!.seq + 1 })
  })

  test('the newest entries deleted are found against the chain head, and a window emptied against its neighbours', async () => {
    const owner = await tenantOwner(api.url)
    for (let i = 0; i < 3; i++) await patFor(owner.client, ['model:read'])
    await sealAudit(api.sql)
    const body = { from: hourAgo(), to: inAnHour() }
    const [row] = await api.sql<{ head: number }[]>`select seq as head from audit_chain_heads where chain = ${owner.tenantId}`
    const head = Number(row!.head)
    const behindTheTriggers = (statement: string) =>
      api.sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`
        await tx.unsafe(statement, [owner.tenantId])
      })

    await behindTheTriggers(`delete from audit_log where chain = $1 and seq = (select max(seq) from audit_log where chain = $1)`)
    const tail = await owner.client.post('/tenants/current/audit-log/verifications', body)
    expect(tail.json.data).toMatchObject({ intact: false, firstBrokenSeq: head, lastSeq: head - 1, head: { seq: head } })

    // Every entry of the window gone: nothing is left in it to recompute, and still the chain cannot account for them.
    await behindTheTriggers(`delete from audit_log where chain = $1`)
    const emptied = await owner.client.post('/tenants/current/audit-log/verifications', body)
    expect(emptied.json.data).toMatchObject({ verified: 0, intact: false, firstBrokenSeq: 1, firstSeq: null })
  })

  test("the purge's permission does not reach an entry younger than a day, and a chain head never moves back", async () => {
    const owner = await tenantOwner(api.url)
    await patFor(owner.client, ['model:read'])
    await sealAudit(api.sql)
    await expect(
      api.sql.begin(async (tx) => {
        await tx`set local rcp.audit_purge = 'on'` // what the retention purge says; any session could say it
        await tx`delete from audit_log where chain = ${owner.tenantId}`
      }),
    ).rejects.toThrow(/at least a day/)
    for (const rewind of [
      'update audit_chain_heads set seq = seq - 1 where chain = $1',
      'update audit_chain_heads set hash = null where chain = $1',
      'update audit_chain_heads set purged_through = -1 where chain = $1',
      'delete from audit_chain_heads where chain = $1',
      'truncate audit_chain_heads',
    ])
      await expect(api.sql.unsafe(rewind, rewind.startsWith('truncate') ? [] : [owner.tenantId])).rejects.toThrow(/only move forward/)
    const res = await owner.client.post('/tenants/current/audit-log/verifications', { from: hourAgo(), to: inAnHour() })
    expect(res.json.data).toMatchObject({ intact: true, firstBrokenSeq: null })
  })
})

describe("the attacker's view", () => {
  test("another tenant's administrator sees none of it, even asking for its ids", async () => {
    const victim = await tenantOwner(api.url)
    const { id } = await patFor(victim.client, ['model:read'])
    const attacker = await tenantOwner(api.url)
    const res = await attacker.client.get(`/tenants/current/audit-log?${auditWindow()}&targetId=${id}`)
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual([])
    const all = await attacker.client.get(`/tenants/current/audit-log?${auditWindow()}&pageSize=100`)
    expect(all.json.data.every((e: { tenantId: string }) => e.tenantId === attacker.tenantId)).toBe(true)
    expect(JSON.stringify(all.json.data)).not.toContain(victim.tenantId)
  })

  test('a token without tenant:manage is refused, and no route alters an entry', async () => {
    const owner = await tenantOwner(api.url)
    const reader = owner.client.withBearer((await patFor(owner.client, ['tenant:read', 'model:read'])).token)
    expect((await reader.get(`/tenants/current/audit-log?${auditWindow()}`)).status).toBe(403)
    expect((await reader.post('/tenants/current/audit-log/verifications', { from: hourAgo(), to: inAnHour() })).status).toBe(403)
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      expect([404, 405]).toContain((await owner.client.call(method, '/tenants/current/audit-log', { body: {} })).status)
    }
  })
})

describe('security activity', () => {
  test("a user sees their own credential changes across tenants, and not anyone else's", async () => {
    const owner = await tenantOwner(api.url)
    const { id } = await patFor(owner.client, ['model:read'])
    const other = await tenantOwner(api.url)
    await patFor(other.client, ['model:read'])
    const mine = await owner.client.get('/users/me/security-activity')
    expect(mine.status).toBe(200)
    const entries = mine.json.data as { action: string; target: { id: string } | null; actor: { id: string } }[]
    expect(entries.some((e) => e.action === 'api_key.created' && e.target?.id === id)).toBe(true)
    expect(entries.every((e) => e.actor.id === owner.userId || e.actor.id === null || e.action.startsWith('api_key.'))).toBe(true)
    expect(JSON.stringify(entries)).not.toContain(other.userId)
  })
})
