import { ActivityFailure, ApplicationFailure, patched, proxyLocalActivities, sleep } from '@temporalio/workflow'
// Type-only: activity code (HTTP, Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { WebhookErrorType, type AttemptOutcome, type DeliverWebhookInput, type DeliverWebhookResult } from './contract-webhooks'

// One attempt is one local activity: it runs in the worker that runs the workflow, so an attempt costs the server
// one workflow task instead of an activity task round trip (the delivery rate tracks a no-op workflow's, and the
// first attempt goes out sooner). A receiver's answer (any status, a timeout, a refused address) is an outcome the
// workflow schedules; the retry policy only covers our own side failing (Postgres, a worker killed mid-attempt,
// which the workflow task timeout notices). Such a retry may send the message again, with the same webhook-id:
// delivery is at least once. The start-to-close timeout covers the request's 15 s and the database work around it.
// Each such retry waits on a server timer, not asleep in the worker (localRetryThreshold 0): a worker restarted
// during the backoff resumes the wait, and the time-skipping tests skip it.
const { attemptWebhookDelivery } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  localRetryThreshold: 0,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [WebhookErrorType.messageGone],
  },
})

const goneType = (err: unknown) => err instanceof ApplicationFailure && err.type === WebhookErrorType.messageGone
// A local activity's non-retryable failure reaches the workflow as the ApplicationFailure itself, not wrapped in an
// ActivityFailure as a retry-exhausted one is (test/unit/workflows/webhooks.test.ts). Runs that went on past an
// unwrapped one before this was noticed replay without the patch.
const gone = (err: unknown) => (err instanceof ActivityFailure && goneType(err.cause)) || (goneType(err) && patched('webhook-message-gone-unwrapped'))

/** Attempts immediately, then after each delay of the schedule (timers here, so a worker restart resumes the wait
 *  where it was). A Retry-After on 429/503 lengthens the next wait, up to retryAfterMaxMs. */
export async function deliverWebhookWorkflow(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
  const { scheduleMs } = input
  if (scheduleMs[0]! > 0) await sleep(scheduleMs[0]!)
  for (let i = 0; i < scheduleMs.length; i++) {
    const last = i === scheduleMs.length - 1
    const call = (slotReserved: boolean) => attemptWebhookDelivery({ tenantId: input.tenantId, messageId: input.messageId, attempt: i + 1, last, slotReserved })
    let outcome: AttemptOutcome
    try {
      outcome = await call(false)
      while (outcome.result === 'paced') {
        await sleep(outcome.waitMs)
        outcome = await call(true)
      }
    } catch (err) {
      if (gone(err)) return { status: 'failed', attempts: i }
      // Our side kept failing for this attempt; the schedule goes on (the last one leaves the message pending).
      outcome = { result: 'failed', retryAfterMs: null }
    }
    if (outcome.result === 'delivered') return { status: 'succeeded', attempts: i + 1 }
    if (outcome.result === 'stopped') return { status: 'failed', attempts: i + 1 }
    if (!last) {
      const retryAfter = outcome.result === 'failed' ? Math.min(outcome.retryAfterMs ?? 0, input.retryAfterMaxMs) : 0
      await sleep(Math.max(scheduleMs[i + 1]!, retryAfter))
    }
  }
  return { status: 'failed', attempts: scheduleMs.length }
}
