// Standard Webhooks 1.0 signing: what a receiver's stock library (standardwebhooks on npm or PyPI) verifies.
import { createHmac } from 'node:crypto'
import type { EventEnvelope, EventType } from '../events/catalogue'
import type { OutgoingMessageRow } from './queries'

/** The webhook-id of a message: the same on every attempt and every redelivery, so receivers can deduplicate. */
export const webhookIdOf = (messageId: string) => `msg_${messageId.replaceAll('-', '')}`

export function envelopeOf(m: OutgoingMessageRow): EventEnvelope {
  return { id: m.event_id, type: m.event_type as EventType, timestamp: m.occurred_at.toISOString(), tenantId: m.tenant_id, data: m.event_data as never }
}

/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>` for each secret (`whsec_` + base64 key), space-separated: two
 *  during a rotation's overlap, so a receiver holding either secret verifies. */
export function signatureHeader(secrets: string[], webhookId: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
      return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64')}`
    })
    .join(' ')
}

export function signedHeaders(secrets: string[], webhookId: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000)
  return {
    'content-type': 'application/json',
    'user-agent': 'rcp-webhooks/1',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, webhookId, timestamp, body),
  }
}
