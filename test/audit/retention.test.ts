// Retention: the housekeeping activities purge, a batch at a time, audit entries past AUDIT_RETENTION_DAYS, webhook
// messages (with their attempts) past WEBHOOK_MESSAGES_RETENTION_DAYS and dispatched events past
// EVENTS_RETENTION_DAYS, and nothing younger; the trail stays append-only for everyone else, and outlives the tenant.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asyncLocalStorage } from '@temporalio/activity'
import { createActivities } from '../../activities'
import { verifyChain } from '../../api/audit/queries'
import { recordAudit } from '../../api/audit/service'
import { activityContext } from '../../api/identity/context'
import { createWorkerMetrics } from '../../worker/metrics'
import { startApi, type TestApi } from '../support/api'
import { ownDatabase, type OwnDatabase } from '../support/own-database'
import { patFor, tenantOwner } from '../support/fixtures'
import { sealAudit } from '../support/audit'
import { deleteTenantRow } from '../support/tenant-row'

// A database of the file's own: what it ages past the retention periods must stay until its own purge runs, and on
// the run's database any housekeeping run may purge it first (test/temporal/replay.test.ts runs a real one on the
// runner's worker; a full run lost a message that way). No dispatcher runs on it either, so its old undispatched
// event stays undispatched.
const api = {} as TestApi
let db: OwnDatabase | undefined
beforeAll(async () => {
  db = await ownDatabase('retention')
  Object.assign(api, await startApi({ DATABASE_URL: db.url }))
}, 60_000)
afterAll(async () => {
  await api.stop?.()
  await db?.scanAndDrop()
})
const DAY = 86_400_000

/** Runs an activity as the worker would, with the little of a Context the housekeeping activities use. */
function inActivity<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = {
    info: { attempt: 1, workflowExecution: { workflowId: 'test/retention', runId: 'r' } },
    heartbeat() {},
    cancellationSignal: new AbortController().signal,
  }
  return asyncLocalStorage.run(ctx as never, fn)
}

/** Housekeeping's activities with small batches, so every purge below takes several. */
const activities = () =>
  createActivities({ ...api.deps, activityMetrics: createWorkerMetrics(api.deps.sql), config: { ...api.deps.config, RETENTION_PURGE_BATCH: 2 } })

/** Moves entries back in time, behind the append-only trigger (as only a test with the replica role can). */
async function age(ids: string[], days: number) {
  await sealAudit(api.sql)
  await api.sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`
    await tx`update audit_log set occurred_at = occurred_at - make_interval(days => ${days}) where id = any(${ids}::uuid[])`
  })
}

const stillThere = async (table: 'audit_log' | 'events' | 'webhook_messages' | 'webhook_attempts', ids: string[]) =>
  (await api.sql<{ id: string }[]>`select id from ${api.sql(table)} where id = any(${ids}::uuid[])`).map((r) => r.id).sort()

describe('retention', () => {
  test('audit entries past the retention period are purged in batches; younger ones stay, and the table still refuses a DELETE', async () => {
    const { config } = api.deps
    const owner = await tenantOwner(api.url)
    const record = () => recordAudit(api.sql, activityContext('test/retention'), { action: 'storage.provisioned', tenantId: owner.tenantId }).then((r) => r.id)
    const old = [await record(), await record(), await record()]
    const kept = [await record()]
    const edge = [await record()]
    await age(old, config.AUDIT_RETENTION_DAYS + 1)
    // A day short of the period: not yet due.
    await age(edge, config.AUDIT_RETENTION_DAYS - 1)

    const purged = await inActivity(() => activities().purgeExpiredAuditEntries())
    expect(purged).toBeGreaterThanOrEqual(old.length)
    expect(await stillThere('audit_log', [...old, ...kept, ...edge])).toEqual([...kept, ...edge].sort())

    // The purge's permission ended with its transaction.
    await expect(api.sql`delete from audit_log where id = ${kept[0]!}`).rejects.toThrow(/append-only/)
    await expect(api.sql`update audit_log set reason = 'x' where id = ${kept[0]!}`).rejects.toThrow(/append-only/)
    expect(await stillThere('audit_log', kept)).toEqual(kept)
  })

  test('webhook messages with their attempts, then dispatched events, past their periods; undispatched and still-needed events stay', async () => {
    const { config } = api.deps
    const owner = await tenantOwner(api.url)
    const ago = (days: number) => new Date(Date.now() - days * DAY)
    const oldEvent = ago(config.EVENTS_RETENTION_DAYS + 1)
    const oldMessage = ago(config.WEBHOOK_MESSAGES_RETENTION_DAYS + 1)
    const [endpoint] = await api.sql<{ id: string }[]>`
      insert into webhook_endpoints (tenant_id, url, events, secret_sealed)
      values (${owner.tenantId}, 'https://hooks.example.test/retention', '{audit.entry}', '\\x00') returning id`
    const event = (occurredAt: Date, dispatchedAt: Date | null) =>
      api.sql<{ id: string }[]>`
      insert into events (tenant_id, type, data, occurred_at, dispatched_at)
      values (${owner.tenantId}, 'audit.entry', '{}', ${occurredAt}, ${dispatchedAt}) returning id`.then((r) => r[0]!.id)
    const message = (eventId: string, createdAt: Date, lastAttemptAt: Date | null, status = 'failed') =>
      api.sql<{ id: string }[]>`
      insert into webhook_messages (tenant_id, endpoint_id, event_id, event_type, status, created_at, last_attempt_at)
      values (${owner.tenantId}, ${endpoint!.id}, ${eventId}, 'audit.entry', ${status}, ${createdAt}, ${lastAttemptAt}) returning id`.then((r) => r[0]!.id)
    const attempt = (messageId: string, at: Date) =>
      api.sql<{ id: string }[]>`
      insert into webhook_attempts (message_id, endpoint_id, attempted_at, succeeded, duration_ms)
      values (${messageId}, ${endpoint!.id}, ${at}, false, 5) returning id`.then((r) => r[0]!.id)

    const gone = { events: [] as string[], messages: [] as string[], attempts: [] as string[] }
    const kept = { events: [] as string[], messages: [] as string[], attempts: [] as string[] }
    // Old and dispatched, never fanned out: due.
    for (let i = 0; i < 3; i++) gone.events.push(await event(oldEvent, oldEvent))
    // Old and dispatched, with an old finished message and its attempts: all three due, the message first.
    const delivered = await event(oldEvent, oldEvent)
    const oldMsg = await message(delivered, oldMessage, oldMessage)
    gone.events.push(delivered)
    gone.messages.push(oldMsg)
    gone.attempts.push(await attempt(oldMsg, oldMessage), await attempt(oldMsg, oldMessage))
    // Old but never dispatched: still owed to the dispatcher.
    kept.events.push(await event(oldEvent, null))
    // Young: not due.
    kept.events.push(await event(new Date(), new Date()))
    // Old event whose old message was redelivered recently: the message and its new attempt stay, and so does the event.
    const redelivered = await event(oldEvent, oldEvent)
    const recentMsg = await message(redelivered, oldMessage, new Date())
    kept.events.push(redelivered)
    kept.messages.push(recentMsg)
    kept.attempts.push(await attempt(recentMsg, new Date()))
    // Old event whose old message is being delivered again right now (pending): stays.
    const inFlight = await event(oldEvent, oldEvent)
    kept.events.push(inFlight)
    kept.messages.push(await message(inFlight, oldMessage, oldMessage, 'pending'))

    const acts = activities()
    expect(await inActivity(() => acts.purgeExpiredWebhookMessages())).toBeGreaterThanOrEqual(gone.messages.length)
    expect(await inActivity(() => acts.purgeExpiredEvents())).toBeGreaterThanOrEqual(gone.events.length)

    const sorted = (xs: string[]) => [...xs].sort()
    expect(await stillThere('events', [...gone.events, ...kept.events])).toEqual(sorted(kept.events))
    expect(await stillThere('webhook_messages', [...gone.messages, ...kept.messages])).toEqual(sorted(kept.messages))
    expect(await stillThere('webhook_attempts', [...gone.attempts, ...kept.attempts])).toEqual(sorted(kept.attempts))
  })

  test("a tenant's entries survive its deletion, and their chain still verifies", async () => {
    const owner = await tenantOwner(api.url)
    for (let i = 0; i < 2; i++) await patFor(owner.client, ['model:read'])
    await sealAudit(api.sql)
    const ids = (await api.sql<{ id: string }[]>`select id from audit_log where tenant_id = ${owner.tenantId}`).map((r) => r.id).sort()
    expect(ids.length).toBeGreaterThanOrEqual(2)

    await deleteTenantRow(api.deps.config.DATABASE_URL, owner.tenantId)
    expect((await api.sql`select 1 from tenants where id = ${owner.tenantId}`).length).toBe(0)

    expect(await stillThere('audit_log', ids)).toEqual(ids)
    const check = await verifyChain(api.sql, owner.tenantId, new Date(Date.now() - DAY), new Date(Date.now() + DAY))
    expect(check).toMatchObject({ verified: ids.length, first_broken_seq: null })
  })

  test('a chain whose start was purged by rule still verifies; its oldest survivor deleted behind the purge does not', async () => {
    const { config } = api.deps
    const owner = await tenantOwner(api.url)
    const record = () => recordAudit(api.sql, activityContext('test/retention'), { action: 'storage.provisioned', tenantId: owner.tenantId }).then((r) => r.id)
    for (let i = 0; i < 3; i++) await record()
    await sealAudit(api.sql)
    // Every entry so far, aged together: the chain's start, as time would leave it.
    const start = (await api.sql<{ id: string }[]>`select id from audit_log where chain = ${owner.tenantId}`).map((r) => r.id)
    await age(start, config.AUDIT_RETENTION_DAYS + 1)
    const young = [await record(), await record()]
    await sealAudit(api.sql)

    await inActivity(() => activities().purgeExpiredAuditEntries())
    expect(await stillThere('audit_log', start)).toEqual([])
    const [head] = await api.sql<{ purged_through: number }[]>`select purged_through from audit_chain_heads where chain = ${owner.tenantId}`
    expect(head!.purged_through).toBe(start.length)
    const verify = () => verifyChain(api.sql, owner.tenantId, new Date(Date.now() - DAY), new Date(Date.now() + DAY))
    expect(await verify()).toMatchObject({ verified: 2, first_broken_seq: null, first_seq: start.length + 1 })

    await api.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`
      await tx`delete from audit_log where id = ${young[0]!}`
    })
    expect(await verify()).toMatchObject({ verified: 1, first_broken_seq: start.length + 2 })
  })
})
