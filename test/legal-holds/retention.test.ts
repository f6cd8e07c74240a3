// What a legal hold keeps from the retention purges: audit entries, events, webhook messages with their attempts and
// idempotency keys that a hold covers stay past their periods while it is active, and go once it is released; the
// same rows of a tenant with no hold go at once (each test's control).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asyncLocalStorage } from '@temporalio/activity'
import { createActivities } from '../../activities'
import { verifyChain } from '../../api/audit/queries'
import { recordAudit } from '../../api/audit/service'
import { activityContext } from '../../api/identity/context'
import { createWorkerMetrics } from '../../worker/metrics'
import { startApi, type TestApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { tenantOwner } from '../support/fixtures'
import { ownDatabase, type OwnDatabase } from '../support/own-database'
import { memberOf } from '../tenancy/members'

// A database of the file's own (as test/audit/retention.test.ts): what it ages must stay until its own purge runs.
const api = {} as TestApi
let db: OwnDatabase | undefined
beforeAll(async () => {
  db = await ownDatabase('holds_retention')
  Object.assign(api, await startApi({ DATABASE_URL: db.url }))
}, 60_000)
afterAll(async () => {
  await api.stop?.()
  await db?.scanAndDrop()
})
const DAY = 86_400_000
const HOLDS = '/tenants/current/legal-holds'

function inActivity<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = {
    info: { attempt: 1, workflowExecution: { workflowId: 'test/holds-retention', runId: 'r' } },
    heartbeat() {},
    cancellationSignal: new AbortController().signal,
  }
  return asyncLocalStorage.run(ctx as never, fn)
}
const activities = (config: Partial<TestApi['deps']['config']> = {}) =>
  createActivities({ ...api.deps, activityMetrics: createWorkerMetrics(api.deps.sql), config: { ...api.deps.config, RETENTION_PURGE_BATCH: 2, ...config } })

type Owner = Awaited<ReturnType<typeof tenantOwner>>
const place = async (owner: Owner, scope: unknown) => {
  const res = await owner.client.post(HOLDS, { matter: 'Matter', reason: 'Preserve', scope })
  if (res.status !== 201) throw new Error(`hold: ${res.status} ${res.text}`)
  return res.json.data.id as string
}
const release = (owner: Owner, id: string) => owner.client.post(`${HOLDS}/${id}/release`)
const present = async (table: string, column: string, ids: string[]) =>
  (await api.sql.unsafe(`select ${column} as id from ${table} where ${column} = any($1)`, [ids])).map((r) => r.id as string).sort()
const sorted = (xs: string[]) => [...xs].sort()

describe('legal holds keep what retention would purge', () => {
  test('audit entries: a tenant held whole keeps its chain, a held member their entries and account chain, a held project its entries', async () => {
    const whole = await tenantOwner(api.url)
    const forMember = await tenantOwner(api.url)
    const forProject = await tenantOwner(api.url)
    const control = await tenantOwner(api.url)
    const held = await memberOf(api.url, api.sql, forMember.tenantId, 'researcher')
    const unheld = await memberOf(api.url, api.sql, control.tenantId, 'researcher')
    const project = (await forProject.client.post('/projects', { name: 'Held', slug: 'held' })).json.data.id as string

    const sys = activityContext('test/holds-retention')
    const entry = (tenantId: string, more: Record<string, unknown> = {}) =>
      recordAudit(api.sql, sys, { action: 'storage.provisioned', tenantId, ...more }).then((r) => r.id)
    const wholeOld = [await entry(whole.tenantId), await entry(whole.tenantId)]
    // In the member's tenant: one entry before theirs (purged), theirs (kept), one after it (kept: a chain only loses
    // its start).
    const memberBefore = await entry(forMember.tenantId)
    const memberOwn = await recordAudit(api.sql, sys, {
      action: 'membership.updated',
      tenantId: forMember.tenantId,
      subjectUserId: held.userId,
      target: { type: 'membership', id: held.membershipId },
    }).then((r) => r.id)
    const memberAfter = await entry(forMember.tenantId)
    const projectOwn = await entry(forProject.tenantId, { action: 'project.updated', target: { type: 'project', id: project } })
    const controlOld = [await entry(control.tenantId), await entry(control.tenantId, { subjectUserId: unheld.userId })]
    await sealAudit(api.sql)
    // The project's chain starts with the tenant's creation, before the project existed: purged. From the project's
    // creation on (its first covered entry), the chain stays; the same for the member's.
    const [projectStart] = await api.sql<{ id: string }[]>`select id from audit_log where chain = ${forProject.tenantId} and seq = 1`

    const chains = [whole.tenantId, forMember.tenantId, forProject.tenantId, control.tenantId, held.userId, unheld.userId]
    const accountOf = async (userId: string) => (await api.sql<{ id: string }[]>`select id from audit_log where chain = ${userId}`).map((r) => r.id)
    const heldAccount = await accountOf(held.userId)
    const unheldAccount = await accountOf(unheld.userId)
    expect(heldAccount.length).toBeGreaterThan(0)
    expect(unheldAccount.length).toBeGreaterThan(0)

    // Every entry so far ages past the period together, as time leaves a chain's start; the holds come after.
    const old = (await api.sql<{ id: string }[]>`select id from audit_log where chain = any(${chains})`).map((r) => r.id)
    await api.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`
      await tx`update audit_log set occurred_at = occurred_at - make_interval(days => ${api.deps.config.AUDIT_RETENTION_DAYS + 1}) where id = any(${old}::uuid[])`
    })
    const holds = [
      [whole, await place(whole, { kind: 'tenant' })],
      [forMember, await place(forMember, { kind: 'member', userId: held.userId })],
      [forProject, await place(forProject, { kind: 'project', projectId: project })],
    ] as const
    await sealAudit(api.sql)
    await inActivity(() => activities().purgeExpiredAuditEntries())

    const kept = [...wholeOld, memberOwn, memberAfter, projectOwn, ...heldAccount]
    const gone = [memberBefore, projectStart!.id, ...controlOld, ...unheldAccount]
    expect(await present('audit_log', 'id', [...kept, ...gone])).toEqual(sorted(kept))
    // Each chain lost a start and nothing else: what survives runs on from the purge's mark without a gap. (The aged
    // entries' own hashes no longer match their times, so the full verification comes after the release, below.)
    for (const chain of chains) {
      const [c] = await api.sql<{ first: number | null; last: number | null; n: number; mark: number }[]>`
        select min(a.seq)::int as first, max(a.seq)::int as last, count(a.id)::int as n, h.purged_through::int as mark
          from audit_chain_heads h left join audit_log a on a.chain = h.chain where h.chain = ${chain} group by h.purged_through`
      const prefixOnly = c!.n === 0 || (c!.first === c!.mark + 1 && c!.last! - c!.first! + 1 === c!.n)
      expect({ chain, prefixOnly }).toEqual({ chain, prefixOnly: true })
    }

    // Released, the holds keep nothing: the next purge takes what they kept.
    for (const [owner, id] of holds) expect((await release(owner, id)).status).toBe(200)
    await sealAudit(api.sql)
    await inActivity(() => activities().purgeExpiredAuditEntries())
    expect(await present('audit_log', 'id', kept)).toEqual([])
    // verifyChain walks a tenant's chain (an account chain has no tenant): the tenants' chains verify end to end.
    const window = [new Date(Date.now() - DAY), new Date(Date.now() + DAY)] as const
    for (const chain of chains.slice(0, 4))
      expect({ chain, broken: (await verifyChain(api.sql, chain, ...window)).first_broken_seq }).toEqual({ chain, broken: null })
  })

  test('events, and webhook messages with their attempts: kept for a tenant held whole, and where their data names a held member or project', async () => {
    const { config } = api.deps
    const whole = await tenantOwner(api.url)
    const forMember = await tenantOwner(api.url)
    const forProject = await tenantOwner(api.url)
    const control = await tenantOwner(api.url)
    const held = await memberOf(api.url, api.sql, forMember.tenantId, 'researcher')
    const project = (await forProject.client.post('/projects', { name: 'Held', slug: 'held' })).json.data.id as string
    const oldEvent = new Date(Date.now() - (config.EVENTS_RETENTION_DAYS + 1) * DAY)
    const oldMessage = new Date(Date.now() - (config.WEBHOOK_MESSAGES_RETENTION_DAYS + 1) * DAY)

    const delivered = async (tenantId: string, data: unknown) => {
      const [endpoint] = await api.sql<{ id: string }[]>`
        insert into webhook_endpoints (tenant_id, url, events, secret_sealed)
        values (${tenantId}, ${`https://hooks.example.test/${crypto.randomUUID()}`}, '{audit.entry}', '\\x00') returning id`
      const [event] = await api.sql<{ id: string }[]>`
        insert into events (tenant_id, type, data, occurred_at, dispatched_at)
        values (${tenantId}, 'audit.entry', ${api.sql.json(data as never)}, ${oldEvent}, ${oldEvent}) returning id`
      const [message] = await api.sql<{ id: string }[]>`
        insert into webhook_messages (tenant_id, endpoint_id, event_id, event_type, status, created_at, last_attempt_at)
        values (${tenantId}, ${endpoint!.id}, ${event!.id}, 'audit.entry', 'succeeded', ${oldMessage}, ${oldMessage}) returning id`
      const [attempt] = await api.sql<{ id: string }[]>`
        insert into webhook_attempts (message_id, endpoint_id, attempted_at, succeeded, duration_ms)
        values (${message!.id}, ${endpoint!.id}, ${oldMessage}, true, 5) returning id`
      return { event: event!.id, message: message!.id, attempt: attempt!.id }
    }
    const naming = (id: string) => ({ action: 'x', actor: { type: 'user', id }, target: null })
    const other = () => naming(crypto.randomUUID())
    const kept = [
      await delivered(whole.tenantId, other()),
      await delivered(forMember.tenantId, naming(held.userId)),
      await delivered(forProject.tenantId, { target: { type: 'project', id: project } }),
    ]
    const gone = [
      await delivered(forMember.tenantId, other()),
      await delivered(forProject.tenantId, other()),
      await delivered(control.tenantId, other()),
      // Another tenant's event naming the held member: a hold covers its own tenant only.
      await delivered(control.tenantId, naming(held.userId)),
    ]
    const holds = [
      [whole, await place(whole, { kind: 'tenant' })],
      [forMember, await place(forMember, { kind: 'member', userId: held.userId })],
      [forProject, await place(forProject, { kind: 'project', projectId: project })],
    ] as const

    const purge = async () => {
      const acts = activities()
      await inActivity(() => acts.purgeExpiredWebhookMessages())
      await inActivity(() => acts.purgeExpiredEvents())
    }
    await purge()
    const of = (rows: { event: string; message: string; attempt: string }[], k: 'event' | 'message' | 'attempt') => rows.map((r) => r[k])
    const all = [...kept, ...gone]
    expect(await present('events', 'id', of(all, 'event'))).toEqual(sorted(of(kept, 'event')))
    expect(await present('webhook_messages', 'id', of(all, 'message'))).toEqual(sorted(of(kept, 'message')))
    expect(await present('webhook_attempts', 'id', of(all, 'attempt'))).toEqual(sorted(of(kept, 'attempt')))

    for (const [owner, id] of holds) await release(owner, id)
    await purge()
    expect(await present('events', 'id', of(kept, 'event'))).toEqual([])
    expect(await present('webhook_messages', 'id', of(kept, 'message'))).toEqual([])
  })

  test("idempotency keys: a held tenant's keys and a held person's own keys outlive their expiry", async () => {
    const whole = await tenantOwner(api.url)
    const forMember = await tenantOwner(api.url)
    const control = await tenantOwner(api.url)
    const held = await memberOf(api.url, api.sql, forMember.tenantId, 'researcher')
    const key = async (scope: string) => {
      await api.sql`
        insert into idempotency_keys (scope, key, request_hash, state, response_status, response_body, created_at, expires_at)
        values (${scope}, ${crypto.randomUUID()}, 'h', 'completed', 201, '\\x00', now() - interval '2 days', now() - interval '1 day')`
      return scope
    }
    const kept = [await key(`tenant:${whole.tenantId}`), await key(`user:${held.userId}`)]
    const gone = [await key(`tenant:${control.tenantId}`), await key(`tenant:${forMember.tenantId}`), await key(`user:${control.userId}`)]
    const holds = [
      [whole, await place(whole, { kind: 'tenant' })],
      [forMember, await place(forMember, { kind: 'member', userId: held.userId })],
    ] as const

    await inActivity(() => activities().purgeExpiredIdempotencyKeys(2))
    expect(await present('idempotency_keys', 'scope', [...kept, ...gone])).toEqual(sorted(kept))
    for (const [owner, id] of holds) await release(owner, id)
    await inActivity(() => activities().purgeExpiredIdempotencyKeys(2))
    expect(await present('idempotency_keys', 'scope', kept)).toEqual([])
  })
})
