import { z } from 'zod'
import { eventTypes, type EventType } from '../events/catalogue'
import { PageQuery } from '../platform/pagination'

// z.url strips tabs, line breaks and outer spaces from what it passes on, so a URL holding them would be stored
// as something else than was sent: they are refused before it parses, as is a fragment (never sent to a receiver).
const EndpointUrl = z
  .string()
  .regex(/^[^\u0000-\u0020\u007f]*$/, 'must not contain spaces or control characters (CR, LF, tab)')
  .regex(/^[^#]*$/, 'must not have a fragment (#…): it is never sent to the receiver')
  .pipe(z.url({ protocol: /^https$/, error: 'must be an absolute https:// URL (plain http is refused: deliveries carry tenant data)' }).max(2048))
  .describe(
    'HTTPS only, without a fragment, spaces or control characters. Its host must resolve to public addresses only: loopback, private, link-local, CGNAT, unique-local, multicast and cloud-metadata destinations are refused, at registration and at every delivery',
  )
const EventName = z.enum(eventTypes as [EventType, ...EventType[]], {
  error: (iss) => `unknown event type ${JSON.stringify(iss.input)}; GET /v1/webhook-event-types lists them`,
})
const Events = z
  .array(EventName)
  .min(1)
  .max(eventTypes.length * 2)
  .describe(
    'Event types this endpoint receives: a non-empty subset of the catalogue (the `webhooks` section of this document). Repeated names are folded into one',
  )
const RateLimit = z.number().int().min(1).max(1000).describe('Deliveries per second at most; bursts are spaced out')
const Description = z.string().trim().max(500)

export const CreateWebhookEndpointBodyDto = z
  .strictObject({
    url: EndpointUrl,
    events: Events,
    description: Description.optional(),
    rateLimitPerSecond: RateLimit.optional().describe('Deliveries per second at most (1–1000); absent: no limit'),
  })
  .meta({ id: 'CreateWebhookEndpointBodyDto' })

export const UpdateWebhookEndpointBodyDto = z
  .strictObject({
    url: EndpointUrl.optional(),
    events: Events.optional(),
    description: Description.nullable().optional().describe('null removes it'),
    enabled: z.boolean().optional().describe('false disables by hand (disabledReason "manual"); true re-enables and clears the reason'),
    rateLimitPerSecond: RateLimit.nullable().optional().describe('null removes the limit'),
  })
  .meta({ id: 'UpdateWebhookEndpointBodyDto' })

export const WebhookEndpointDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabledReason: z
      .enum(['gone', 'failing', 'manual', 'tenant_deleted'])
      .nullable()
      .describe(
        'gone: the receiver answered 410; failing: every attempt failed for the configured period; manual: disabled by PATCH; tenant_deleted: its tenant is being deleted',
      ),
    disabledAt: z.iso.datetime().nullable(),
    rateLimitPerSecond: z.number().int().nullable(),
    previousSecretExpiresAt: z.iso
      .datetime()
      .nullable()
      .describe('Until then deliveries carry a second signature made with the secret before the last rotation'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpointDto' })

const Secret = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+=*$/)
  .describe(
    'Signing secret in the Standard Webhooks format: whsec_ + base64 of 32 random bytes. Shown in this response only; it is stored encrypted and never returned again',
  )

export const CreateWebhookEndpointResponseDto = z
  .object({
    endpoint: WebhookEndpointDto,
    secret: Secret,
  })
  .meta({ id: 'CreateWebhookEndpointResponseDto' })

export const WebhookSecretRotationDto = z
  .object({
    endpoint: WebhookEndpointDto,
    secret: Secret,
    previousSecretExpiresAt: z.iso.datetime().describe('The secret before this rotation keeps signing beside the new one until then'),
  })
  .meta({ id: 'WebhookSecretRotationDto' })

export const ListWebhookEndpointsQuery = PageQuery.extend({
  enabled: z.enum(['true', 'false']).optional().describe('Only enabled (true) or disabled (false) endpoints'),
})

export const WebhookEventTypeDto = z
  .object({
    type: z.string(),
    summary: z.string(),
    dataSchema: z.record(z.string(), z.unknown()).describe("JSON Schema (2020-12) of the event's `data`"),
  })
  .meta({ id: 'WebhookEventTypeDto' })

export type CreateWebhookEndpoint = z.infer<typeof CreateWebhookEndpointBodyDto>
export type UpdateWebhookEndpoint = z.infer<typeof UpdateWebhookEndpointBodyDto>
