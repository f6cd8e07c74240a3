import { Elysia } from 'elysia'
import { z } from 'zod'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, listEnvelope, ok, okVersioned, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { RemovalResultDto } from '../memberships/model'
import { eventTypeDocs } from './event-types'
import {
  CreateWebhookEndpointBodyDto,
  CreateWebhookEndpointResponseDto,
  ListWebhookEndpointsQuery,
  UpdateWebhookEndpointBodyDto,
  WebhookEndpointDto,
  WebhookEventTypeDto,
  WebhookSecretRotationDto,
} from './model'
import { changeEndpoint, createEndpoint, getEndpoint, listWebhookEndpoints, removeEndpoint, rotateSecret, toWebhookEndpointDto } from './service'

/** Where a tenant's events go. The signing secret appears in two answers only (registration and rotation). */
export const webhookEndpointsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Webhooks'] })
    .use(http)
    .post(
      '/webhook-endpoints',
      async ({ request, ctx, body, set }) => {
        const { row, secret } = await createEndpoint(deps, ctx, body)
        set.status = 201
        return okVersioned(request, set, row.version, { endpoint: toWebhookEndpointDto(row), secret })
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T409'],
        body: CreateWebhookEndpointBodyDto,
        response: { 201: envelope(CreateWebhookEndpointResponseDto) },
        detail: {
          ...links({ endpointId: '$response.body#/data/endpoint/id' }, [
            'GET /v1/webhook-endpoints/{endpointId}',
            'PATCH /v1/webhook-endpoints/{endpointId}',
            'DELETE /v1/webhook-endpoints/{endpointId}',
            'POST /v1/webhook-endpoints/{endpointId}/secret-rotations',
            'GET /v1/webhook-endpoints/{endpointId}/messages',
            'POST /v1/webhook-endpoints/{endpointId}/recoveries',
            'POST /v1/webhook-endpoints/{endpointId}/test-events',
          ]),
          summary: 'Register an HTTPS endpoint for a subset of the event catalogue; the signing secret is in this response only',
        },
      },
    )
    .get('/webhook-endpoints', async ({ request, ctx, query }) => page(request, await listWebhookEndpoints(deps, ctx, query)), {
      auth: 'tenant:manage',
      errors: ['T400p'],
      query: ListWebhookEndpointsQuery,
      response: { 200: listEnvelope(WebhookEndpointDto) },
      detail: { summary: 'Webhook endpoints of the current tenant, newest first (secrets are never returned)' },
    })
    .get(
      '/webhook-endpoints/:endpointId',
      async ({ request, ctx, params, set }) => {
        const row = await getEndpoint(deps, ctx, params.endpointId)
        return okVersioned(request, set, row.version, toWebhookEndpointDto(row))
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404'],
        response: { 200: envelope(WebhookEndpointDto) },
        detail: { summary: 'One webhook endpoint, with its ETag for If-Match' },
      },
    )
    .patch(
      '/webhook-endpoints/:endpointId',
      async ({ request, ctx, params, body, set }) => {
        const row = await changeEndpoint(deps, ctx, params.endpointId, ifMatchVersion(request), body)
        return okVersioned(request, set, row.version, toWebhookEndpointDto(row))
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404', 'T409', 'P412'],
        body: UpdateWebhookEndpointBodyDto,
        response: { 200: envelope(WebhookEndpointDto) },
        detail: { summary: 'Change url, events, description, rate limit or enabled (If-Match optional); enabling clears the disabled reason' },
      },
    )
    .delete(
      '/webhook-endpoints/:endpointId',
      async ({ request, ctx, params }) => ok(request, await removeEndpoint(deps, ctx, params.endpointId, ifMatchVersion(request))),
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404', 'T409', 'P412'],
        response: { 200: envelope(RemovalResultDto) },
        detail: { summary: 'Remove an endpoint (If-Match optional): nothing more is delivered to it' },
      },
    )
    .post(
      '/webhook-endpoints/:endpointId/secret-rotations',
      async ({ request, ctx, params, set }) => {
        const { row, secret } = await rotateSecret(deps, ctx, params.endpointId)
        set.status = 201
        return okVersioned(request, set, row.version, {
          endpoint: toWebhookEndpointDto(row),
          secret,
          previousSecretExpiresAt: row.previous_secret_expires_at!.toISOString(),
        })
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T404', 'T409'],
        response: { 201: envelope(WebhookSecretRotationDto) },
        detail: {
          summary: 'Rotate the signing secret: the new one is in this response only; the old one keeps signing beside it for the overlap (24 h by default)',
        },
      },
    )
    .get('/webhook-event-types', ({ request }) => ok(request, eventTypeDocs()), {
      public: true,
      errors: ['A400s'],
      response: { 200: envelope(z.array(WebhookEventTypeDto)) },
      detail: { summary: 'The event catalogue: every type an endpoint can subscribe to, with the JSON Schema of its data' },
    })
