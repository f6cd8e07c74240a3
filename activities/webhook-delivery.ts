// One delivery attempt of a webhook message: sign, POST through the outbound guard, record what happened, and
// apply the endpoint rules (410 disables, failing for WEBHOOK_DISABLE_AFTER_SECONDS disables). The workflow
// (workflows/webhooks.ts) owns the schedule; this answers an outcome rather than throwing for a receiver's failure.
import { setTimeout as sleep } from 'node:timers/promises'
import { ApplicationFailure } from '@temporalio/activity'
import { OutboundFailed, guardedFetch, type GuardedResponse } from '../api/platform/outbound/fetch'
import { OutboundRefused } from '../api/platform/outbound/guard'
import { outboundPolicy, outboundPolicyOf } from '../api/platform/outbound/policy'
import {
  claimSend,
  failingSince,
  findOutgoingMessage,
  markMessageFailed,
  recordAttempt,
  reserveSlot,
  type AttemptRecord,
} from '../api/webhook-deliveries/queries'
import { envelopeOf, signedHeaders, webhookIdOf } from '../api/webhook-deliveries/signing'
import { recordUsage } from '../api/usage/record'
import { disableEndpoint, findEndpoint, signingSecrets } from '../api/webhook-endpoints/service'
import { WebhookErrorType, type AttemptInput, type AttemptOutcome } from '../workflows/contract-webhooks'
import type { ActivityDeps } from './deps'
import { workflowActor } from './system-actor'

const BODY_KEPT_BYTES = 1024
// A receiver's answer is read whole before it is judged; anything bigger is a failed attempt, not a memory risk.
const MAX_RESPONSE_BYTES = 256 * 1024

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (!value) return null
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

// The gate opens within one interval (at most 1 s) of a refusal: waited for here, since a workflow timer and the
// task that follows it can take longer than that on a busy server, and each late wake-up would cost the endpoint
// a send. Past this the workflow waits instead.
const GATE_WAIT_MS = 2000

/** Passes the endpoint's send gate, waiting here while it opens soon enough; answers the gate's stamp once through,
 *  else how long until it may open (nothing was sent). */
async function passGate(sql: ActivityDeps['sql'], endpointId: string, intervalMs: number): Promise<{ sentAt: Date } | { waitMs: number }> {
  const deadline = Date.now() + GATE_WAIT_MS
  for (;;) {
    const gate = await claimSend(sql, endpointId, intervalMs)
    if ('sentAt' in gate || Date.now() + gate.waitMs > deadline) return gate
    await sleep(gate.waitMs)
  }
}

type Exchange = { response: GuardedResponse } | { errorClass: string }

function errorClassOf(err: unknown): string {
  if (err instanceof OutboundRefused) return `refused:${err.reason}`
  if (err instanceof OutboundFailed) return err.reason === 'too-large' ? 'response_too_large' : err.reason
  throw err
}

/** The outcome of an answered request, and its error class (null on success). */
function judge(res: GuardedResponse, now: number): { outcome: AttemptOutcome; errorClass: string | null } {
  if (res.status >= 200 && res.status < 300) return { outcome: { result: 'delivered', status: res.status }, errorClass: null }
  if (res.status === 410) return { outcome: { result: 'stopped', reason: 'gone' }, errorClass: 'gone' }
  const retryAfter = res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get('retry-after'), now) : null
  return {
    outcome: { result: 'failed', retryAfterMs: retryAfter },
    errorClass: res.status >= 300 && res.status < 400 ? 'redirect_not_followed' : 'http_status',
  }
}

// Postgres text holds no NUL; a receiver's body is shown as text, cut at 1 KiB.
const keptBody = (body: Buffer) => body.subarray(0, BODY_KEPT_BYTES).toString('utf8').replaceAll('\u0000', '')

export function webhookDeliveryActivities(deps: ActivityDeps) {
  const { sql, config, log, resolve } = deps
  const policy = resolve ? outboundPolicy(config, { resolve }) : outboundPolicyOf(config)

  return {
    async attemptWebhookDelivery(input: AttemptInput): Promise<AttemptOutcome> {
      const message = await findOutgoingMessage(sql, input.tenantId, input.messageId)
      if (!message) throw ApplicationFailure.create({ type: WebhookErrorType.messageGone, message: `message ${input.messageId} is gone`, nonRetryable: true })
      // A retried activity whose first run recorded the success: never send again.
      if (message.status === 'succeeded') return { result: 'delivered', status: 0 }
      const endpoint = await findEndpoint(sql, input.tenantId, message.endpoint_id)
      if (!endpoint?.enabled) {
        await markMessageFailed(sql, message.id)
        return { result: 'stopped', reason: 'endpoint_disabled' }
      }
      const intervalMs = endpoint.rate_limit_per_second ? 1000 / endpoint.rate_limit_per_second : 0
      if (intervalMs && !input.slotReserved) {
        const waitMs = await reserveSlot(sql, endpoint.id, intervalMs)
        if (waitMs > 0) return { result: 'paced', waitMs: Math.ceil(waitMs) }
      }

      // Right before the request (signing takes microseconds): a timer that fired late must not send on the heels
      // of the send before, and the attempt's recorded time is when the gate let it through.
      let at = new Date()
      if (intervalMs) {
        const gate = await passGate(sql, endpoint.id, intervalMs)
        if ('waitMs' in gate) return { result: 'paced', waitMs: Math.ceil(gate.waitMs) }
        // The gate's stamp, not this process's clock after the round trip: on a loaded worker the two were tens of
        // milliseconds apart, and two attempts' recorded times closer than the spacing the gate kept.
        at = gate.sentAt
      }
      const body = JSON.stringify(envelopeOf(message))
      const headers = signedHeaders(signingSecrets(deps, endpoint, at), webhookIdOf(message.id), at, body)
      const t0 = performance.now()
      const exchange: Exchange = await guardedFetch(
        endpoint.url,
        { method: 'POST', headers, body },
        { policy, timeoutMs: config.WEBHOOK_TIMEOUT_MS, maxBodyBytes: MAX_RESPONSE_BYTES },
      ).then(
        (response) => ({ response }),
        (err) => ({ errorClass: errorClassOf(err) }),
      )
      const durationMs = Math.round(performance.now() - t0)
      const judged =
        'response' in exchange
          ? judge(exchange.response, Date.now())
          : { outcome: { result: 'failed', retryAfterMs: null } as AttemptOutcome, errorClass: exchange.errorClass }
      const record: AttemptRecord = {
        messageId: message.id,
        endpointId: endpoint.id,
        attemptedAt: at,
        succeeded: judged.outcome.result === 'delivered',
        durationMs,
        responseStatus: 'response' in exchange ? exchange.response.status : null,
        responseBody: 'response' in exchange ? keptBody(exchange.response.body) : null,
        errorClass: judged.errorClass,
      }

      const platform = workflowActor() // what the attempt changes (disabling the endpoint), this workflow did
      const outcome = await sql.begin(async (tx): Promise<AttemptOutcome> => {
        const attemptId = await recordAttempt(tx, record, input.last || judged.outcome.result === 'stopped')
        // Metered with the attempt it counts, and only when the receiver answered (any status): a refused or
        // unreachable send did no work for the tenant. Endpoints carry no project, so neither does the event.
        if ('response' in exchange)
          await recordUsage(tx, {
            tenantId: input.tenantId,
            projectId: null,
            meter: 'webhook.deliveries',
            quantity: 1,
            occurredAt: at,
            idempotencyKey: `webhook.deliveries:${attemptId}`,
          })
        if (judged.outcome.result === 'stopped') {
          await disableEndpoint(tx, platform, input.tenantId, endpoint.id, 'gone')
          return judged.outcome
        }
        if (judged.outcome.result !== 'failed') return judged.outcome
        const since = await failingSince(tx, endpoint.id)
        if (!since || at.getTime() - since.getTime() < config.WEBHOOK_DISABLE_AFTER_SECONDS * 1000) return judged.outcome
        await disableEndpoint(tx, platform, input.tenantId, endpoint.id, 'failing')
        await markMessageFailed(tx, message.id)
        return { result: 'stopped', reason: 'failing' }
      })
      deps.activityMetrics.webhookAttempt(judged.outcome.result === 'paced' ? 'failed' : judged.outcome.result, input.attempt)
      log.debug('webhook attempt', {
        messageId: message.id,
        endpointId: endpoint.id,
        attempt: input.attempt,
        status: record.responseStatus,
        errorClass: record.errorClass,
        durationMs,
      })
      if (outcome.result === 'stopped')
        log.warn('webhook endpoint stops receiving', { endpointId: endpoint.id, tenantId: input.tenantId, reason: outcome.reason })
      return outcome
    },
  }
}
