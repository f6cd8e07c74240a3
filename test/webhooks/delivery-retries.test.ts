// The retry schedule against receivers that misbehave: down for a while then back (nothing lost), Retry-After,
// rate limits spacing a burst, and recover resending only what failed. The schedule is compressed by config.
import { describe, expect, test } from 'bun:test'
import { eventually } from '../support/temporal'
import { messagesOf, publish, Receiver, receivedEventIds, settled, trainingDone, useDeliveryEnv, webhookTenant } from './delivery-helpers'

// The tail is long enough that no message of a burst runs out of attempts (12 s) while the last ones of the same burst
// reach their second on a loaded machine: the outage test brings its receiver back only then.
const env = useDeliveryEnv({ WEBHOOK_RETRY_SCHEDULE: '0,300ms,300ms,500ms,1s,2s,3s,5s' })

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!)
/** An endpoint's attempts' recorded send times (the pacing gate's stamps), in order, in ms. */
const sendTimes = async (endpointId: string) =>
  (
    await env.api.sql<{ at: Date }[]>`
  select a.attempted_at as at from webhook_attempts a join webhook_messages m on m.id = a.message_id
   where m.endpoint_id = ${endpointId} order by a.attempted_at`
  ).map((s) => s.at.getTime())

describe('retries', () => {
  test('a receiver down for a while, then back: every event delivered, none lost, one webhook-id per message', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'] })
    await r.stop() // down: connections are refused
    const ids = await publish(env.api, t.tenantId, 'training_job.completed', trainingDone, 20)
    await eventually('every message to have failed twice', async () => {
      const rows = await messagesOf(env.api, ep.id)
      return rows.length === 20 && rows.every((m) => m.attempt_count >= 2) ? rows : undefined
    })
    await r.start() // back, on the same port
    const rows = await settled(env.api, ep.id, 20)
    expect(rows.filter((m) => m.status !== 'succeeded').map((m) => `${m.status} after ${m.attempt_count} attempts`)).toEqual([])
    expect(receivedEventIds(r)).toEqual(new Set(ids))
    const idsPerEvent = new Map<string, Set<string>>()
    for (const d of r.deliveries) idsPerEvent.set(d.body.id, (idsPerEvent.get(d.body.id) ?? new Set()).add(d.webhookId))
    expect([...idsPerEvent.values()].every((s) => s.size === 1)).toBe(true)
    const [attempts] = await env.api.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_attempts a join webhook_messages m on m.id = a.message_id where m.endpoint_id = ${ep.id} and a.error_class = 'network'`
    expect(attempts!.n).toBeGreaterThanOrEqual(40)
    await r.stop()
  }, 90_000)

  test('Retry-After on 429 and 503 holds the next attempt back longer than the schedule would', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    const seen = new Map<string, number>()
    r.answer = (d) => {
      const n = (seen.get(d.webhookId) ?? 0) + 1
      seen.set(d.webhookId, n)
      if (n > 1) return { status: 204 }
      return { status: d.body.data.name === 'busy' ? 503 : 429, headers: { 'retry-after': '1' } }
    }
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'] })
    await publish(env.api, t.tenantId, 'training_job.completed', () => ({ ...trainingDone(), name: 'limited' }))
    await publish(env.api, t.tenantId, 'training_job.completed', () => ({ ...trainingDone(), name: 'busy' }))
    await settled(env.api, ep.id, 2, 30_000)
    for (const name of ['limited', 'busy']) {
      const times = r.deliveries.filter((d) => d.body.data.name === name).map((d) => d.at)
      expect(times.length).toBe(2)
      // The schedule's second delay is 300 ms; Retry-After asked for 1 s. How the workflow weighs Retry-After against
      // the schedule and its cap is test/unit/workflows/webhooks.test.ts; this is the header read off the wire.
      expect(gaps(times)[0]!).toBeGreaterThanOrEqual(900)
    }
    await r.stop()
  }, 60_000)

  test('rateLimitPerSecond spaces a burst out, across the whole endpoint', async () => {
    const t = await webhookTenant(env.api)
    const limited = await new Receiver(env.certs).start()
    const ep = await t.register({ url: limited.url(), events: ['training_job.completed'], rateLimitPerSecond: 2 })
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone, 6)
    await settled(env.api, ep.id, 6, 30_000)
    const times = limited.deliveries.map((d) => d.at).sort((a, b) => a - b)
    expect(times.length).toBe(6)
    // The gate stamps each send (the attempt's recorded time) at least 500 ms after the endpoint's last, whichever
    // worker sends it (to the millisecond: the stamps are microseconds). The slots taken before are no schedule to
    // check against: each is 500 ms after the one before it or, when a message's workflow reached the pacing row
    // later than that (a loaded worker), its own time.
    const sends = await sendTimes(ep.id)
    expect(sends.length).toBe(6)
    expect({ gaps: gaps(sends), spaced: gaps(sends).every((g) => g >= 500 - 1) }).toEqual({ gaps: gaps(sends), spaced: true })
    // So the six arrive spread over at least five intervals (the network's jitter moves each by a little).
    expect(times[5]! - times[0]!).toBeGreaterThanOrEqual(5 * 500 - 50)
    await limited.stop()
  }, 60_000)

  test('rateLimitPerSecond 2, ten test events asked at once: no two sends closer than 1/rate, never more than rate + 1 arrivals in a second', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    const rate = 2
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'], rateLimitPerSecond: rate })
    // All ten at once (how long the API takes to answer them depends on the machine; they are asked together).
    const sent = await Promise.all(Array.from({ length: 10 }, () => t.manager.post(`/webhook-endpoints/${ep.id}/test-events`)))
    expect(sent.map((s) => s.status)).toEqual(Array(10).fill(202))
    await settled(env.api, ep.id, 10, 30_000)
    const times = r.deliveries.map((d) => d.at).sort((a, b) => a - b)
    expect(times.length).toBe(10)
    // What docs/webhooks.md promises (Delivery, Rate limit): sends (the attempts' recorded times) at least
    // 1/rate apart, so a one-second window of arrivals holds at most rate + 1 (the network's jitter moves arrivals,
    // not the count: rate + 2 would need two sends within 1/rate).
    const sends = await sendTimes(ep.id)
    expect(sends.length).toBe(10)
    expect(Math.min(...gaps(sends))).toBeGreaterThanOrEqual(1000 / rate - 25)
    // A send's recorded time is the gate's own stamp (the last is the endpoint's last_sent_at), not the worker's clock
    // read after the gate's round trip, which a loaded worker read late enough that two sends looked 459 ms apart.
    const [gate] = await env.api.sql<{ at: Date }[]>`select last_sent_at as at from webhook_endpoint_pacing where endpoint_id = ${ep.id}`
    expect(sends.at(-1)).toBe(gate!.at.getTime())
    const busiest = Math.max(...times.map((from) => times.filter((at) => at >= from && at <= from + 1000).length))
    const arrivals = times.map((at) => at - times[0]!) // shown when it fails
    expect({ withinLimit: busiest <= rate + 1, arrivals }).toEqual({ withinLimit: true, arrivals })
    await r.stop()
  }, 60_000)

  test('recover redelivers only the failed messages since the given time, with their webhook-ids', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    let healthy = false
    r.answer = (d) => (healthy || d.body.data.name === 'fine' ? { status: 200 } : { status: 500 })
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'] })
    const since = new Date().toISOString()
    const good = await publish(env.api, t.tenantId, 'training_job.completed', () => ({ ...trainingDone(), name: 'fine' }), 3)
    const bad = await publish(env.api, t.tenantId, 'training_job.completed', () => ({ ...trainingDone(), name: 'broken' }), 4)
    await settled(env.api, ep.id, 7, 60_000)
    const firstIds = new Map(r.deliveries.map((d) => [d.body.id, d.webhookId]))
    healthy = true
    const before = r.deliveries.length

    const res = await t.manager.post(`/webhook-endpoints/${ep.id}/recoveries`, { since })
    expect([res.status, res.json.data]).toEqual([202, { redelivered: 4 }])
    const rows = await eventually('the recovered messages to succeed', async () => {
      const all = await messagesOf(env.api, ep.id)
      return all.every((m) => m.status === 'succeeded') ? all : undefined
    })
    expect(rows.length).toBe(7)
    const resent = r.deliveries.slice(before)
    expect(new Set(resent.map((d) => d.body.id))).toEqual(new Set(bad))
    expect(resent.every((d) => d.webhookId === firstIds.get(d.body.id))).toBe(true)
    expect(resent.some((d) => good.includes(d.body.id))).toBe(false)
    // Nothing failed is left: recovering again redelivers nothing.
    expect((await t.manager.post(`/webhook-endpoints/${ep.id}/recoveries`, { since })).json.data).toEqual({ redelivered: 0 })

    // One message redelivered on request: a new run, same webhook-id.
    const one = (await messagesOf(env.api, ep.id)).find((m) => good.includes(m.event_id))
    const again = await t.manager.post(`/webhook-endpoints/${ep.id}/messages/${one!.id}/redeliveries`)
    expect([again.status, again.json.data.redeliveries]).toEqual([202, 1])
    const last = await eventually('the redelivery', async () => r.deliveries.slice(before + resent.length).find((d) => d.body.id === one!.event_id))
    expect(last.webhookId).toBe(again.json.data.webhookId)
    await r.stop()
  }, 90_000)
})
