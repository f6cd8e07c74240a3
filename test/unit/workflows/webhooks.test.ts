// workflows/webhooks.ts on the time-skipping server: the retry schedule, Retry-After, pacing and the stops, each
// attempt timed by the server's own clock (the stand-in asks it when it is called), so hours of schedule take
// no wall-clock time and a machine's load cannot stretch what is measured.
import { describe, expect, test } from 'bun:test'
import { ApplicationFailure } from '@temporalio/common'
import { WebhookErrorType, type AttemptInput, type AttemptOutcome, type DeliverWebhookInput } from '../../../workflows/contract-webhooks'
import { useTimeSkipping } from '../support/time-skipping'

const ts = useTimeSkipping('webhooks')

const S = 1000
const M = 60 * S
const H = 60 * M
// The production default of WEBHOOK_RETRY_SCHEDULE (api/platform/config.ts): 0,5s,5m,30m,2h,5h,10h,10h.
const SCHEDULE = [0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]

interface Call extends AttemptInput { at: number }

/** Runs one delivery whose attempts answer `answer(call number)`; returns the result and every call, with its time
 *  on the server's clock from the workflow's first task (the worker's cold start is not the workflow's). */
async function deliver(answer: (n: number, input: AttemptInput) => AttemptOutcome | Promise<AttemptOutcome>, input: Partial<DeliverWebhookInput> = {}) {
  const calls: Call[] = []
  const result = await ts.withWorker({
    async attemptWebhookDelivery(a: AttemptInput): Promise<AttemptOutcome> {
      calls.push({ ...a, at: await ts.env.currentTimeMs() })
      return answer(calls.length, a)
    },
  }, async (taskQueue) => {
    const handle = await ts.env.client.workflow.start('deliverWebhookWorkflow', {
      taskQueue, workflowId: `webhook-${crypto.randomUUID()}`,
      args: [{ tenantId: 't1', messageId: 'm1', scheduleMs: SCHEDULE, retryAfterMaxMs: H, ...input } satisfies DeliverWebhookInput],
    })
    const result = await handle.result()
    const firstTask = (await handle.fetchHistory()).events!.find((e) => e.workflowTaskStartedEventAttributes)!
    const started = Number(firstTask.eventTime!.seconds) * 1000 + Math.floor((firstTask.eventTime!.nanos ?? 0) / 1e6)
    for (const c of calls) c.at -= started
    return result
  })
  return { result, calls }
}

/** The wait before each attempt, from the workflow's first task and then from the previous attempt, in whole seconds:
 *  the server's clock also runs through a workflow task and a call (milliseconds), never backwards, so flooring
 *  gives the timer's own duration. */
const waits = (calls: Call[]) => calls.map((c, i) => Math.floor((c.at - (i === 0 ? 0 : calls[i - 1]!.at)) / S))
const secs = (delays: number[]) => delays.map((d) => d / S)

describe('the retry schedule', () => {
  test('a receiver that always fails gets one attempt per delay of the schedule, each after the previous, then the message fails', async () => {
    const { result, calls } = await deliver(() => ({ result: 'failed', retryAfterMs: null }))
    expect(result).toEqual({ status: 'failed', attempts: SCHEDULE.length })
    expect(waits(calls)).toEqual(secs(SCHEDULE))
    expect(calls.map((c) => [c.attempt, c.last, c.slotReserved])).toEqual(SCHEDULE.map((_, i) => [i + 1, i === SCHEDULE.length - 1, false]))
  }, 60_000)

  test('a first delay is waited before the first attempt', async () => {
    const { calls } = await deliver(() => ({ result: 'failed', retryAfterMs: null }), { scheduleMs: [10 * M, 1 * H] })
    expect(waits(calls)).toEqual([600, 3600])
  }, 60_000)

  test('a delivery ends the schedule: no attempt after it', async () => {
    const { result, calls } = await deliver((n) => (n === 3 ? { result: 'delivered', status: 204 } : { result: 'failed', retryAfterMs: null }))
    expect(result).toEqual({ status: 'succeeded', attempts: 3 })
    expect(waits(calls)).toEqual(secs(SCHEDULE.slice(0, 3)))
  }, 60_000)

  test('a stop (410, the endpoint disabled for failing) ends it as failed at that attempt', async () => {
    const { result, calls } = await deliver((n) => (n === 2 ? { result: 'stopped', reason: 'failing' } : { result: 'failed', retryAfterMs: null }))
    expect(result).toEqual({ status: 'failed', attempts: 2 })
    expect(calls.length).toBe(2)
  }, 60_000)

  test('the message gone (tenant or endpoint deleted) ends it at once, without a retry of the activity', async () => {
    const { result, calls } = await deliver((n) => {
      if (n === 2) throw ApplicationFailure.nonRetryable('gone', WebhookErrorType.messageGone)
      return { result: 'failed', retryAfterMs: null }
    })
    expect(result).toEqual({ status: 'failed', attempts: 1 })
    expect(calls.length).toBe(2)
  }, 60_000)
})

describe('Retry-After', () => {
  test('lengthens the next wait up to retryAfterMaxMs, never shortens it', async () => {
    const answers: AttemptOutcome[] = [
      { result: 'failed', retryAfterMs: 40 * M }, // longer than the schedule's 5 s: waited
      { result: 'failed', retryAfterMs: 1 * S }, // shorter than the schedule's 5 min: the schedule wins
      { result: 'failed', retryAfterMs: 5 * H }, // longer than the cap (1 h): the cap
      { result: 'delivered', status: 200 },
    ]
    const { result, calls } = await deliver((n) => answers[n - 1]!)
    expect(result).toEqual({ status: 'succeeded', attempts: 4 })
    expect(waits(calls)).toEqual(secs([0, 40 * M, 5 * M, 1 * H]))
  }, 60_000)
})

describe('pacing', () => {
  test('a paced attempt waits the slot out and is sent again as the same attempt, its slot reserved', async () => {
    const answers: AttemptOutcome[] = [
      { result: 'paced', waitMs: 20 * M },
      { result: 'paced', waitMs: 3 * M },
      { result: 'failed', retryAfterMs: null },
      { result: 'delivered', status: 200 },
    ]
    const { result, calls } = await deliver((n) => answers[n - 1]!)
    expect(result).toEqual({ status: 'succeeded', attempts: 2 })
    expect(calls.map((c) => [c.attempt, c.slotReserved])).toEqual([[1, false], [1, true], [1, true], [2, false]])
    expect(waits(calls)).toEqual(secs([0, 20 * M, 3 * M, 5 * S]))
  }, 60_000)
})
