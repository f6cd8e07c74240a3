// The worker process (dispatcher and delivery workflows) SIGKILLed in the middle of a burst, then started again:
// every event reaches every endpoint, each message with one webhook-id however many attempts it took, and no event
// fans out twice. Also: a message committed whose workflow start was lost is started by the next dispatcher pass.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startApi, type TestApi } from '../support/api'
import { ownDatabase, type OwnDatabase } from '../support/own-database'
import { eventually } from '../support/temporal'
import { killableWorkers } from '../support/worker-process'
import { makeCertificates, messagesOf, publish, Receiver, trainingDone, webhookTenant } from './delivery-helpers'

const EVENTS = 150
const prefix = `rcp-wh-crash-${crypto.randomUUID().slice(0, 8)}`
const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'webhook-crash-'))
const certs = makeCertificates(dir)
const settings: Record<string, string> = {
  TEMPORAL_TASK_QUEUE_PREFIX: prefix,
  OUTBOUND_CA_FILE: certs.caFile,
  WEBHOOK_DISPATCHER: 'true',
  WEBHOOK_DISPATCH_POLL_MS: '250',
  WEBHOOK_DISPATCH_BATCH: '20',
  WORKER_TASK_QUEUES: 'webhooks',
  WEBHOOK_RETRY_SCHEDULE: '0,500ms,1s,1s,2s,2s,3s,3s',
}
let api: TestApi
let db: OwnDatabase | undefined

// Its workers run the webhook dispatcher, which claims every undispatched event of its database: a database of its own.
beforeAll(async () => {
  db = await ownDatabase('webhook_crash')
  settings.DATABASE_URL = db.url
}, 60_000)
const workers = killableWorkers('webhook-crash-workers', settings)

beforeAll(async () => {
  api = await startApi(settings)
})
afterAll(async () => {
  await api.stop()
  rmSync(dir, { recursive: true, force: true })
})
afterAll(async () => {
  // after the workers' own afterAll: nothing holds a connection to the database any more
  await db?.scanAndDrop()
})

describe('a worker killed during a burst of deliveries', () => {
  test('every event is delivered to every endpoint after the restart, each message under one webhook-id', async () => {
    const t = await webhookTenant(api)
    // Slow receivers, so the burst is still going when the worker dies.
    const receivers = await Promise.all([0, 1].map(() => new Receiver(certs).start()))
    for (const r of receivers) r.delayMs = 50
    const endpoints = await Promise.all(receivers.map((r) => t.register({ url: r.url(), events: ['training_job.completed'] })))
    receivers.forEach((r, i) => {
      r.secrets = [endpoints[i]!.secret]
    })

    const first = await workers.start('worker-1')
    const ids = await publish(api, t.tenantId, 'training_job.completed', trainingDone, EVENTS)
    await eventually('the burst to be under way', async () => (receivers[0]!.deliveries.length >= 20 ? true : undefined), 60_000)
    await first.stop()
    const atKill = receivers.map((r) => r.deliveries.length)
    expect(atKill[0]!).toBeLessThan(EVENTS)

    await workers.start('worker-2')
    for (const [i, ep] of endpoints.entries()) {
      const rows = await eventually(
        `endpoint ${i} to have every message succeeded`,
        async () => {
          const all = await messagesOf(api, ep.id)
          return all.length === EVENTS && all.every((m) => m.status === 'succeeded') ? all : undefined
        },
        120_000,
      )
      expect(new Set(rows.map((m) => m.event_id))).toEqual(new Set(ids))
      const r = receivers[i]!
      expect(new Set(r.deliveries.map((d) => d.body.id))).toEqual(new Set(ids))
      const webhookIds = new Map<string, Set<string>>()
      for (const d of r.deliveries) webhookIds.set(d.body.id, (webhookIds.get(d.body.id) ?? new Set()).add(d.webhookId))
      expect([...webhookIds.values()].every((s) => s.size === 1)).toBe(true)
      expect(r.deliveries.every((d) => d.verifiedBy.length === 1)).toBe(true)
    }
    // Every event was dispatched exactly once: one message per (event, endpoint), every event stamped.
    const [counts] = await api.sql<{ messages: number; undispatched: number }[]>`
      select (select count(*)::int from webhook_messages where event_id = any(${ids}::uuid[])) as messages,
             (select count(*)::int from events where id = any(${ids}::uuid[]) and dispatched_at is null) as undispatched`
    expect(counts).toEqual({ messages: EVENTS * endpoints.length, undispatched: 0 })
    for (const r of receivers) await r.stop()
  }, 360_000)

  test('a message committed without its workflow start (a crash between the two) is started by the dispatcher', async () => {
    const t = await webhookTenant(api)
    const r = await new Receiver(certs).start()
    const ep = await t.register({ url: r.url(), events: ['training_job.failed'] })
    // What a dispatcher leaves behind when it dies right after its commit: the event stamped, the message unstarted.
    const [eventId] = await api.sql.begin(async (tx) => {
      const [e] = await tx<{ id: string }[]>`
        insert into events (tenant_id, type, data, dispatched_at) values (${t.tenantId}, 'training_job.failed',
          ${tx.json({ trainingJobId: crypto.randomUUID(), name: 'orphan', reason: 'lost start' })}, now()) returning id`
      await tx`insert into webhook_messages (tenant_id, endpoint_id, event_id, event_type, created_at)
        values (${t.tenantId}, ${ep.id}, ${e!.id}, 'training_job.failed', now() - interval '10 seconds')`
      return [e!.id]
    })
    const delivered = await eventually('the orphaned message to be delivered', async () => r.deliveries.find((d) => d.body.id === eventId), 30_000)
    expect(delivered.body.data.name).toBe('orphan')
    await r.stop()
  }, 60_000)
})
