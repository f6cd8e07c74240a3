// SSRF at attempt time: the worker resolves the endpoint's host at every attempt, refuses loopback, private and
// metadata answers, and connects only to the address it checked, so a host that rebinds after registration (public
// then 127.0.0.2) cannot reach inside. The worker here lets only 127.0.0.1 (the stand-in for a public receiver)
// through; the API, which registered the URLs, allowed loopback as the test runner configures it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Resolver } from '../../api/platform/outbound/policy'
import { systemResolver } from '../../api/platform/outbound/policy'
import { Receiver, publish, settled, trainingDone, useDeliveryEnv, webhookTenant } from './delivery-helpers'

/** `localhost` answers what the test scripted last; every other name resolves as usual. */
const answers: string[][] = []
const resolve: Resolver = async (host) =>
  host === 'localhost' && answers.length > 0
    ? answers[0]!.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))
    : systemResolver(host)

const env = useDeliveryEnv({ WEBHOOK_RETRY_SCHEDULE: '0' }, { resolve, worker: { OUTBOUND_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32' } })

let good: Receiver
let evil: Receiver
beforeAll(async () => {
  good = await new Receiver(env.certs).start()
  // The same port on 127.0.0.2: where a second resolution, or a followed redirect, would land.
  evil = await new Receiver(env.certs, '127.0.0.2').start(good.port)
})
afterAll(async () => {
  await good.stop()
  await evil.stop()
})

/** Publishes one event and waits for its single attempt (the schedule has one); `n` counts the endpoint's messages. */
async function attemptOnce(t: Awaited<ReturnType<typeof webhookTenant>>, endpointId: string, n = 1) {
  await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
  const rows = await settled(env.api, endpointId, n, 30_000)
  const [last] = await env.api.sql<{ error_class: string | null; response_status: number | null }[]>`
    select error_class, response_status from webhook_attempts where endpoint_id = ${endpointId} order by attempted_at desc, id desc limit 1`
  return { rows, last: last! }
}

describe('SSRF at attempt time', () => {
  test('a host that rebinds after registration: delivered while it resolves to the allowed address, refused once it turns inward', async () => {
    const t = await webhookTenant(env.api)
    const ep = await t.register({ url: good.url('/hook', 'localhost'), events: ['training_job.completed'] })
    const cases: [string[], string | null][] = [
      [['127.0.0.1'], null],
      [['127.0.0.2'], 'refused:loopback'],
      [['10.0.0.5'], 'refused:private'],
      [['169.254.169.254'], 'refused:metadata'],
      [['::ffff:127.0.0.2'], 'refused:loopback'],
      [['127.0.0.1', '192.168.1.1'], 'refused:private'],
    ]
    for (const [i, [answer, expected]] of cases.entries()) {
      answers.unshift(answer)
      const { last } = await attemptOnce(t, ep.id, i + 1)
      expect({ answer, errorClass: last.error_class }).toEqual({ answer, errorClass: expected })
    }
    expect(good.deliveries.length).toBe(1)
    expect(evil.deliveries).toEqual([])
    answers.length = 0
  }, 90_000)

  test('a loopback address other than the allowed one is refused; a redirect is not followed', async () => {
    const t = await webhookTenant(env.api)
    const inward = await t.register({ url: evil.url(), events: ['training_job.completed'] })
    expect((await attemptOnce(t, inward.id)).last.error_class).toBe('refused:loopback')
    expect(evil.deliveries).toEqual([])

    const before = good.deliveries.length
    good.answer = () => ({ status: 307, headers: { location: evil.url('/inside') } })
    const t2 = await webhookTenant(env.api)
    const bouncing = await t2.register({ url: good.url('/bounce'), events: ['training_job.completed'] })
    const { last, rows } = await attemptOnce(t2, bouncing.id)
    expect([last.response_status, last.error_class, rows[0]!.status]).toEqual([307, 'redirect_not_followed', 'failed'])
    expect(good.deliveries.length).toBe(before + 1)
    expect(evil.deliveries).toEqual([])
    good.answer = () => ({ status: 204 })
  }, 60_000)
})
