import { z } from 'zod'
import { PageQuery } from '../platform/pagination'

export const MESSAGE_STATUSES = ['pending', 'succeeded', 'failed'] as const

export const WebhookAttemptDto = z
  .object({
    id: z.uuid(),
    attemptedAt: z.iso.datetime(),
    succeeded: z.boolean().describe('Only a 2xx answer is a success'),
    responseStatus: z.number().int().nullable().describe('null when no answer came (timeout, network, refused destination)'),
    durationMs: z.number().int().nonnegative(),
    responseBody: z.string().nullable().describe('The first 1 KiB of the answer'),
    errorClass: z
      .string()
      .nullable()
      .describe(
        'null on success; http_status, redirect_not_followed, gone, timeout, network, response_too_large, or refused:<class> ' +
          '(the destination resolved to a loopback, private, link-local, metadata… address at attempt time)',
      ),
  })
  .meta({ id: 'WebhookAttemptDto' })

export const WebhookMessageDto = z
  .object({
    id: z.uuid(),
    webhookId: z.string().describe('The webhook-id header of every attempt of this message'),
    endpointId: z.uuid(),
    eventId: z.uuid().describe('The envelope id'),
    eventType: z.string(),
    status: z.enum(MESSAGE_STATUSES).describe('pending: attempts remain; succeeded; failed: attempts ran out, the endpoint was disabled or answered 410'),
    attemptCount: z.number().int().nonnegative(),
    redeliveries: z.number().int().nonnegative(),
    lastAttemptAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookMessageDto' })

export const WebhookMessageDetailDto = z
  .object({
    message: WebhookMessageDto,
    attempts: z.array(WebhookAttemptDto).describe('Oldest first, across every run of the message'),
  })
  .meta({ id: 'WebhookMessageDetailDto' })

export const ListWebhookMessagesQuery = PageQuery.extend({
  status: z.enum(MESSAGE_STATUSES).optional(),
})

export const EndpointParams = z.object({ endpointId: z.string().max(100) })
export const MessageParams = EndpointParams.extend({ messageId: z.string().max(100) })

export const RecoverWebhookMessagesBodyDto = z
  .strictObject({
    since: z.iso.datetime({ offset: true }).describe('Redeliver every failed message of the endpoint created at or after this time'),
  })
  .meta({ id: 'RecoverWebhookMessagesBodyDto' })

export const RecoverWebhookMessagesResponseDto = z
  .object({
    redelivered: z.number().int().nonnegative().describe('Failed messages that got a new delivery run'),
  })
  .meta({ id: 'RecoverWebhookMessagesResponseDto' })
