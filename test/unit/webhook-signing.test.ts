// Webhook signing (api/webhook-deliveries/signing.ts) without a server: what the stock standardwebhooks library a
// receiver uses accepts, with either secret during a rotation, and nothing else. Deliveries signed on the wire are
// test/webhooks/delivery-signing.test.ts.
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { signedHeaders, webhookIdOf } from '../../api/webhook-deliveries/signing'

const secret = () => `whsec_${randomBytes(24).toString('base64')}`
const verifies = (s: string, headers: Record<string, string>, body: string) => {
  try {
    new Webhook(s).verify(body, headers)
    return true
  } catch {
    return false
  }
}

describe('webhook signatures', () => {
  test("the receiver's library verifies each of the secrets, and refuses another secret, body or id", () => {
    const [current, previous] = [secret(), secret()]
    const body = JSON.stringify({ id: 'e1', type: 'training_job.completed', data: { ok: true } })
    const headers = signedHeaders([current, previous], webhookIdOf('6b1d3f0e-0000-4000-8000-000000000001'), new Date(), body)
    expect(headers['webhook-id']).toBe('msg_6b1d3f0e000040008000000000000001')
    expect(headers['webhook-signature']!.split(' ').map((s) => s.slice(0, 3))).toEqual(['v1,', 'v1,'])
    expect([verifies(current, headers, body), verifies(previous, headers, body)]).toEqual([true, true])
    expect(verifies(secret(), headers, body)).toBe(false)
    expect(verifies(current, headers, `${body} `)).toBe(false)
    expect(verifies(current, { ...headers, 'webhook-id': 'msg_other' }, body)).toBe(false)
  })

  test('the timestamp is signed, in whole seconds: a stale or altered one is refused', () => {
    const s = secret()
    const body = '{}'
    const stale = signedHeaders([s], 'msg_1', new Date(Date.now() - 3600_000), body)
    expect(verifies(s, stale, body)).toBe(false)
    const fresh = signedHeaders([s], 'msg_1', new Date(), body)
    expect(fresh['webhook-timestamp']).toMatch(/^\d{10}$/)
    expect(verifies(s, { ...fresh, 'webhook-timestamp': String(Number(fresh['webhook-timestamp']) - 1) }, body)).toBe(false)
  })
})
