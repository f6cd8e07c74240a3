// The webhook meter: attempts that reached the receiver, whatever it answered; a send that never reached it is not
// counted. Runs its own delivery worker on a database of its own (the dispatcher claims every event of its database).
import { describe, expect, test } from 'bun:test'
import { messagesOf, publish, Receiver, settled, trainingDone, useDeliveryEnv, webhookTenant } from '../webhooks/delivery-helpers'
import { eventually } from '../support/temporal'

const env = useDeliveryEnv({ WORKER_TASK_QUEUES: '' })

const metered = async (tenantId: string) =>
  (
    await env.api.sql<{ n: string; keys: string[] }[]>`
    select coalesce(sum(quantity), 0)::text as n, coalesce(array_agg(idempotency_key order by id), '{}') as keys
      from usage_events where tenant_id = ${tenantId} and meter = 'webhook.deliveries'`
  )[0]!

describe('webhook deliveries metered', () => {
  test('a 500 then a 204 are two attempts that reached the receiver: two events, one per recorded attempt', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    let n = 0
    r.answer = () => ({ status: ++n === 1 ? 500 : 204 })
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'] })
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
    await settled(env.api, ep.id, 1)
    const attempts = await env.api.sql<{ id: string }[]>`
      select a.id from webhook_attempts a join webhook_messages m on m.id = a.message_id where m.endpoint_id = ${ep.id} order by a.attempted_at`
    expect(attempts).toHaveLength(2)
    const m = await metered(t.tenantId)
    expect(m.n).toBe('2')
    expect(m.keys).toEqual(attempts.map((a) => `webhook.deliveries:${a.id}`))
    await r.stop()
  }, 60_000)

  test('attempts refused by a receiver that is down are recorded but not metered', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'] })
    await r.stop()
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
    await eventually('two failed attempts', async () => ((await messagesOf(env.api, ep.id))[0]?.attempt_count ?? 0) >= 2 || undefined)
    await r.start()
    await settled(env.api, ep.id, 1)
    const [counts] = await env.api.sql<{ reached: number; refused: number }[]>`
      select count(*) filter (where a.response_status is not null)::int as reached, count(*) filter (where a.response_status is null)::int as refused
        from webhook_attempts a join webhook_messages m on m.id = a.message_id where m.endpoint_id = ${ep.id}`
    expect(counts!.refused).toBeGreaterThanOrEqual(2)
    expect(counts!.reached).toBe(1)
    expect((await metered(t.tenantId)).n).toBe('1')
    await r.stop()
  }, 60_000)
})
