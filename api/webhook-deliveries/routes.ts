import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import {
  EndpointParams,
  ListWebhookMessagesQuery,
  MessageParams,
  RecoverWebhookMessagesBodyDto,
  RecoverWebhookMessagesResponseDto,
  WebhookMessageDetailDto,
  WebhookMessageDto,
} from './model'
import { getEndpointMessage, listEndpointMessages, recoverEndpoint, redeliverMessage, sendTestEvent } from './service'

export const webhookDeliveriesRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Webhook deliveries'] })
    .use(http)
    .get(
      '/webhook-endpoints/:endpointId/messages',
      async ({ request, ctx, params, query }) => page(request, await listEndpointMessages(deps, ctx, params.endpointId, query)),
      {
        auth: 'tenant:manage',
        errors: ['T400p', 'T404'],
        params: EndpointParams,
        query: ListWebhookMessagesQuery,
        response: { 200: listEnvelope(WebhookMessageDto) },
        detail: { summary: 'Messages of a webhook endpoint (one per event it was subscribed to), newest first' },
      },
    )
    .get(
      '/webhook-endpoints/:endpointId/messages/:messageId',
      async ({ request, ctx, params }) => ok(request, await getEndpointMessage(deps, ctx, params.endpointId, params.messageId)),
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404'],
        params: MessageParams,
        response: { 200: envelope(WebhookMessageDetailDto) },
        detail: { summary: 'A message with every attempt: time, response status, duration, first 1 KiB of the answer, error class' },
      },
    )
    .post(
      '/webhook-endpoints/:endpointId/messages/:messageId/redeliveries',
      async ({ request, ctx, params, set }) => {
        set.status = 202
        return ok(request, await redeliverMessage(deps, ctx, params.endpointId, params.messageId))
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T404', 'T409', 'WD409'],
        params: MessageParams,
        response: { 202: envelope(WebhookMessageDto) },
        detail: { summary: 'Deliver a message again: a new run of the retry schedule, with the same webhook-id (a pending message is answered as it is)' },
      },
    )
    .post(
      '/webhook-endpoints/:endpointId/recoveries',
      async ({ request, ctx, params, body, set }) => {
        set.status = 202
        return ok(request, await recoverEndpoint(deps, ctx, params.endpointId, body.since))
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T404', 'T409', 'WD409'],
        params: EndpointParams,
        body: RecoverWebhookMessagesBodyDto,
        response: { 202: envelope(RecoverWebhookMessagesResponseDto) },
        detail: { summary: 'Redeliver every failed message of the endpoint since a time; answers how many' },
      },
    )
    .post(
      '/webhook-endpoints/:endpointId/test-events',
      async ({ request, ctx, params, set }) => {
        set.status = 202
        return ok(request, await sendTestEvent(deps, ctx, params.endpointId))
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T404', 'T409', 'WD409'],
        params: EndpointParams,
        response: { 202: envelope(WebhookMessageDto) },
        detail: {
          ...links({ endpointId: '$request.path.endpointId', messageId: '$response.body#/data/id' }, [
            'GET /v1/webhook-endpoints/{endpointId}/messages/{messageId}',
            'POST /v1/webhook-endpoints/{endpointId}/messages/{messageId}/redeliveries',
          ]),
          summary: 'Send a webhook_endpoint.test event to this endpoint only; answers its message',
        },
      },
    )
