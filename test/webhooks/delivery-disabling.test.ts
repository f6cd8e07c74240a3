// When delivery gives up on an endpoint: 410 Gone disables it at once, failing for WEBHOOK_DISABLE_AFTER_SECONDS
// (compressed here) disables it, and either way webhook_endpoint.disabled goes to the tenant's other endpoints;
// a disabled endpoint's pending messages stop. The delivery workflow's schedule itself (waits, stops, Retry-After)
// is test/unit/workflows/webhooks.test.ts, on the time-skipping server; this file is the endpoint rules on the real
// servers, each absence checked once the work that could have broken it is over.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { webhookWorkflowIds, type DeliverWebhookResult } from '../../workflows/contract-webhooks'
import { connectTemporal, eventually, type TestTemporal } from '../support/temporal'
import { messagesOf, publish, Receiver, settled, trainingDone, useDeliveryEnv, webhookTenant } from './delivery-helpers'

const DISABLE_AFTER_MS = 2000
const env = useDeliveryEnv({
  WEBHOOK_RETRY_SCHEDULE: '0,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms',
  WEBHOOK_DISABLE_AFTER_SECONDS: String(DISABLE_AFTER_MS / 1000),
})

let temporal: TestTemporal
beforeAll(async () => {
  temporal = await connectTemporal()
})
afterAll(async () => {
  await temporal?.close()
})

const endpointRow = async (id: string) =>
  (await env.api.sql<{ enabled: boolean; disabled_at: Date | null }[]>`select enabled, disabled_at from webhook_endpoints where id = ${id}`)[0]!

/** Waits for the delivery workflow of each of the endpoint's messages to finish: after that nothing more is sent. */
async function deliveriesOver(endpointId: string): Promise<DeliverWebhookResult[]> {
  const rows = await env.api.sql<
    { event_id: string; event_type: string }[]
  >`select event_id, event_type from webhook_messages where endpoint_id = ${endpointId}`
  return Promise.all(
    rows.map((m) => temporal.client.workflow.getHandle(webhookWorkflowIds.delivery({ endpointId, eventType: m.event_type, eventId: m.event_id })).result()),
  )
}

/** Waits until the dispatcher has fanned the event out: its messages are written in the transaction that stamps it. */
const dispatched = (eventId: string) =>
  eventually(
    `event ${eventId} dispatched`,
    async () => (await env.api.sql`select 1 from events where id = ${eventId} and dispatched_at is not null`).length > 0 || undefined,
  )

async function tenantWithWatcher() {
  const t = await webhookTenant(env.api)
  const watcher = await new Receiver(env.certs).start()
  const watch = await t.register({ url: watcher.url(), events: ['webhook_endpoint.disabled'] })
  watcher.secrets = [watch.secret]
  return { t, watcher }
}

describe('disabling', () => {
  test('410 Gone disables the endpoint after one attempt and tells the other endpoints', async () => {
    const { t, watcher } = await tenantWithWatcher()
    const gone = await new Receiver(env.certs).start()
    gone.answer = () => ({ status: 410, body: 'no such hook' })
    const ep = await t.register({ url: gone.url(), events: ['training_job.completed'] })
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
    const [message] = await settled(env.api, ep.id, 1)
    expect(await deliveriesOver(ep.id)).toEqual([{ status: 'failed', attempts: 1 }])
    expect([message!.status, message!.attempt_count, gone.deliveries.length]).toEqual(['failed', 1, 1])
    expect((await endpointRow(ep.id)).enabled).toBe(false)
    const notice = await eventually('webhook_endpoint.disabled at the other endpoint', async () => watcher.of('webhook_endpoint.disabled')[0])
    expect(notice.body.data).toMatchObject({ endpointId: ep.id, reason: 'gone' })
    expect(notice.verifiedBy).toEqual([0])
    // A later event is fanned out without it: once the dispatcher has stamped the event, no message of it exists for
    // the disabled endpoint, so none can be sent.
    const [later] = await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
    await dispatched(later!)
    expect((await messagesOf(env.api, ep.id)).map((m) => m.event_id)).not.toContain(later)
    expect(gone.deliveries.length).toBe(1)
    await gone.stop()
    await watcher.stop()
  }, 60_000)

  test('an endpoint whose every attempt failed for the configured time is disabled; its pending messages stop', async () => {
    const { t, watcher } = await tenantWithWatcher()
    const failing = await new Receiver(env.certs).start()
    failing.answer = () => ({ status: 500 })
    const ep = await t.register({ url: failing.url(), events: ['training_job.completed'] })
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone, 3)
    const rows = await settled(env.api, ep.id, 3, 30_000)
    // Every workflow has ended, so whatever was going to be sent has been: the counts below are final.
    const results = await deliveriesOver(ep.id)
    expect(rows.every((m) => m.status === 'failed')).toBe(true)
    expect(results.every((r) => r.status === 'failed')).toBe(true)
    const endpoint = await endpointRow(ep.id)
    expect(endpoint.enabled).toBe(false)
    // Against the attempts' own recorded times, not how fast the loop ran: disabled once the endpoint had failed for
    // the window, and at the first attempts past it (one per message still going, at most: the first to find the
    // window over disables it, and the others' next attempt finds it disabled and sends nothing).
    const sent = (await env.api.sql<{ at: Date }[]>`select attempted_at as at from webhook_attempts where endpoint_id = ${ep.id} order by attempted_at`).map(
      (r) => r.at.getTime(),
    )
    expect(endpoint.disabled_at!.getTime() - sent[0]!).toBeGreaterThanOrEqual(DISABLE_AFTER_MS)
    expect(sent.filter((at) => at - sent[0]! >= DISABLE_AFTER_MS).length).toBeGreaterThanOrEqual(1)
    expect(sent.filter((at) => at - sent[0]! >= DISABLE_AFTER_MS).length).toBeLessThanOrEqual(3)
    expect(failing.deliveries.length).toBe(sent.length)
    const notice = await eventually('webhook_endpoint.disabled at the other endpoint', async () => watcher.of('webhook_endpoint.disabled')[0])
    expect(notice.body.data).toMatchObject({ endpointId: ep.id, reason: 'failing' })
    expect((await messagesOf(env.api, ep.id)).length).toBe(3)
    await failing.stop()
    await watcher.stop()
  }, 60_000)

  test('a success in between restarts the clock: an endpoint that fails only sometimes stays enabled', async () => {
    const t = await webhookTenant(env.api)
    const flaky = await new Receiver(env.certs).start()
    // Every other attempt fails, so a failure is always followed by a success. Two failures in a row (every third
    // attempt succeeding, as this test once had it) can lie more than the window apart when a loaded machine stretches
    // the half-second retries, and then disabling is the right answer.
    let n = 0
    const answered: number[] = []
    flaky.answer = () => {
      const status = ++n % 2 === 0 ? 200 : 500
      answered.push(status)
      return { status }
    }
    const ep = await t.register({ url: flaky.url(), events: ['training_job.completed'] })
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone, 3)
    const rows = await settled(env.api, ep.id, 3, 30_000)
    expect(rows.every((m) => m.status === 'succeeded')).toBe(true)
    expect((await endpointRow(ep.id)).enabled).toBe(true)
    // It did fail in between: three successes took at least three failures, and some came after a success.
    expect(answered.filter((s) => s === 500).length).toBeGreaterThanOrEqual(3)
    expect(answered.slice(answered.indexOf(200) + 1)).toContain(500)
    await flaky.stop()
  }, 60_000)
})
