// The event catalogue as documents: the list route's items and the OpenAPI 3.1 `webhooks` section, both built from
// the same zod schemas publishEvent checks producers against, so what is promised is what is sent.
import { z } from 'zod'
import { eventCatalogue, eventTypes, type EventType } from '../events/catalogue'

type Json = Record<string, unknown>

function dataSchemaOf(type: EventType): Json {
  const { $schema: _, ...schema } = z.toJSONSchema(eventCatalogue[type].data, { target: 'draft-2020-12' }) as Json
  return schema
}

/** Every type with its summary and the JSON Schema of its `data`, in catalogue order. */
export const eventTypeDocs = (() => {
  let cached: { type: EventType; summary: string; dataSchema: Json }[] | undefined
  return () => (cached ??= eventTypes.map((type) => ({ type, summary: eventCatalogue[type].summary, dataSchema: dataSchemaOf(type) })))
})()

const header = (name: string, description: string, example?: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  ...(example ? { example } : {}),
})

const SIGNATURE_HEADERS = [
  header('webhook-id', 'The message id: the same on every attempt of one message to one endpoint, so receivers can drop repeats (delivery is at least once)'),
  header('webhook-timestamp', 'Seconds since the Unix epoch when this attempt was signed; refuse ones far from your clock (replays)', '1700000000'),
  header(
    'webhook-signature',
    'Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64-decoded part of the endpoint secret after `whsec_`. During a rotation overlap there are two: one per live secret; accept the message when any matches',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
]

function webhookOperation(type: EventType, summary: string, data: Json): Json {
  return {
    post: {
      operationId: `webhook_${type.replace(/[^A-Za-z0-9]/g, '_')}`,
      summary,
      description: `Sent to every enabled endpoint subscribed to \`${type}\`, signed per Standard Webhooks 1.0. Any 2xx acknowledges it; anything else, a timeout or a refused connection is retried.`,
      tags: ['Webhook events'],
      parameters: SIGNATURE_HEADERS,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['id', 'type', 'timestamp', 'tenantId', 'data'],
              properties: {
                id: { type: 'string', format: 'uuid', description: 'The event id: the same for every endpoint the event goes to' },
                type: { type: 'string', const: type },
                timestamp: { type: 'string', format: 'date-time', description: 'When the event was written, in the transaction of the change it reports' },
                tenantId: { type: 'string', format: 'uuid' },
                data,
              },
            },
          },
        },
      },
      responses: { '2XX': { description: 'Received; the body is ignored' } },
    },
  }
}

/** The OpenAPI 3.1 top-level `webhooks` object: one operation per catalogue type. */
export const webhooksDocument = (): Json => Object.fromEntries(eventTypeDocs().map((d) => [d.type, webhookOperation(d.type, d.summary, d.dataSchema)]))
