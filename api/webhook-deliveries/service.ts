// Reading an endpoint's deliveries, redelivering, recovering and test events. Every route is tenant-scoped through
// the endpoint: an endpoint of another tenant is a 404, and so is any message under it.
import { recordAudit } from '../audit/service'
import { logIds, tenantOf, type RequestContext } from '../identity/context'
import { publishEvent } from '../events/service'
import { markEventsDispatched } from '../events/queries'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { findEndpoint } from '../webhook-endpoints/service'
import { claimRedeliveries, findMessage, insertMessages, listAttempts, listMessages, type AttemptRow, type MessageRow, type MessageStatus } from './queries'
import { webhookIdOf } from './signing'
import { startDeliveries } from './start'

const iso = (d: Date | null) => d?.toISOString() ?? null

export const toMessageDto = (m: MessageRow) => ({
  id: m.id,
  webhookId: webhookIdOf(m.id),
  endpointId: m.endpoint_id,
  eventId: m.event_id,
  eventType: m.event_type,
  status: m.status,
  attemptCount: m.attempt_count,
  redeliveries: m.redeliveries,
  lastAttemptAt: iso(m.last_attempt_at),
  createdAt: m.created_at.toISOString(),
})

const toAttemptDto = (a: AttemptRow) => ({
  id: a.id,
  attemptedAt: a.attempted_at.toISOString(),
  succeeded: a.succeeded,
  responseStatus: a.response_status,
  durationMs: a.duration_ms,
  responseBody: a.response_body,
  errorClass: a.error_class,
})

const endpointTarget = (endpoint: { id: string }) => ({ type: 'webhook_endpoint', id: endpoint.id })
const notFound = (what: string) => new ApiError('NOT_FOUND', `No ${what} with this id in the current tenant`)

async function endpointOf({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, endpointId: string) {
  const { tenantId } = tenantOf(ctx)
  const endpoint = isUuid(endpointId) ? await findEndpoint(sql, tenantId, endpointId) : undefined
  if (!endpoint) throw notFound('webhook endpoint')
  return endpoint
}

async function messageOf(deps: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, endpointId: string, messageId: string) {
  const endpoint = await endpointOf(deps, ctx, endpointId)
  const message = isUuid(messageId) ? await findMessage(deps.sql, endpoint.tenant_id, endpoint.id, messageId) : undefined
  if (!message) throw notFound('message of this webhook endpoint')
  return { endpoint, message }
}

/** Newest first. */
export async function listEndpointMessages(
  deps: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  endpointId: string,
  q: PageParams & { status?: MessageStatus },
) {
  const endpoint = await endpointOf(deps, ctx, endpointId)
  const binding = {
    route: 'GET /webhook-endpoints/{id}/messages',
    scope: `tenant:${endpoint.tenant_id}:endpoint:${endpoint.id}`,
    filters: { status: q.status },
  }
  const filter = { tenantId: endpoint.tenant_id, endpointId: endpoint.id, status: q.status }
  const p = await paginate(deps.keys, binding, q, (after, limit) => listMessages(deps.sql, filter, after, limit), createdCursorOf)
  return mapPage(p, toMessageDto)
}

export async function getEndpointMessage(deps: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, endpointId: string, messageId: string) {
  const { message } = await messageOf(deps, ctx, endpointId, messageId)
  return { message: toMessageDto(message), attempts: (await listAttempts(deps.sql, message.id)).map(toAttemptDto) }
}

type StartDeps = Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'log'>

/** Starts the runs after commit; a failed start is left to the dispatcher's sweep of unstarted messages. */
async function startAfterCommit(deps: StartDeps, ctx: RequestContext, messages: MessageRow[]) {
  if (messages.length === 0) return
  try {
    await startDeliveries(await deps.temporal.get(), deps.sql, deps.config, messages)
  } catch (err) {
    deps.log.warn('starting delivery workflows failed; the dispatcher will start them', { ...logIds(ctx), err, messages: messages.length })
  }
}

const refuseDisabled = (endpoint: { enabled: boolean }) => {
  if (!endpoint.enabled) throw new ApiError('WEBHOOK_ENDPOINT_DISABLED', 'The webhook endpoint is disabled; enable it first')
}

/** A new run of the message's whole schedule, with the same webhook-id. A message still pending keeps its current
 *  run (it will be attempted anyway), is answered as it is, and is not recorded: nothing was queued again. */
export async function redeliverMessage(deps: StartDeps, ctx: RequestContext, endpointId: string, messageId: string) {
  const { endpoint, message } = await messageOf(deps, ctx, endpointId, messageId)
  refuseDisabled(endpoint)
  const [claimed] = await deps.sql.begin(async (tx) => {
    const rows = await claimRedeliveries(tx, { tenantId: endpoint.tenant_id, endpointId: endpoint.id, messageId: message.id })
    if (rows.length > 0) {
      await recordAudit(tx, ctx, {
        action: 'webhook_message.redelivered',
        tenantId: endpoint.tenant_id,
        target: { type: 'webhook_message', id: message.id },
        details: { endpointId: endpoint.id, eventType: message.event_type },
      })
    }
    return rows
  })
  if (claimed) await startAfterCommit(deps, ctx, [claimed])
  return toMessageDto(claimed ?? message)
}

/** Redelivers every failed message of the endpoint created at or after `since`; succeeded ones are left alone. */
export async function recoverEndpoint(deps: StartDeps, ctx: RequestContext, endpointId: string, since: string) {
  const endpoint = await endpointOf(deps, ctx, endpointId)
  refuseDisabled(endpoint)
  const claimed = await deps.sql.begin(async (tx) => {
    const rows = await claimRedeliveries(tx, { tenantId: endpoint.tenant_id, endpointId: endpoint.id, failedSince: new Date(since) })
    await recordAudit(tx, ctx, {
      action: 'webhook_endpoint.recovery_started',
      tenantId: endpoint.tenant_id,
      target: endpointTarget(endpoint),
      details: { since: new Date(since).toISOString(), redelivered: rows.length },
    })
    return rows
  })
  await startAfterCommit(deps, ctx, claimed)
  return { redelivered: claimed.length }
}

/** A `webhook_endpoint.test` event for this endpoint only: the event is written already dispatched, with its one
 *  message, in one transaction, so the dispatcher never fans it out to the tenant's other endpoints. */
export async function sendTestEvent(deps: StartDeps, ctx: RequestContext, endpointId: string) {
  const endpoint = await endpointOf(deps, ctx, endpointId)
  refuseDisabled(endpoint)
  const [message] = await deps.sql.begin(async (tx) => {
    const event = await publishEvent(tx, endpoint.tenant_id, 'webhook_endpoint.test', { endpointId: endpoint.id, note: 'Sent on request from the API.' })
    await markEventsDispatched(tx, [event.id])
    const messages = await insertMessages(tx, [
      { tenantId: endpoint.tenant_id, endpointId: endpoint.id, eventId: event.id, eventType: 'webhook_endpoint.test' },
    ])
    await recordAudit(tx, ctx, {
      action: 'webhook_endpoint.test_sent',
      tenantId: endpoint.tenant_id,
      target: endpointTarget(endpoint),
      details: { messageId: messages[0]!.id },
    })
    return messages
  })
  await startAfterCommit(deps, ctx, [message!])
  return toMessageDto(message!)
}
