// workflows/webhooks.ts on the time-skipping server: the retry schedule, Retry-After, pacing and the stops. Hours of
// schedule take no wall-clock time; the waits are read from the workflow's history (each timer as the workflow set
// it, exact whatever the machine's load), and checked against the server's clock at each attempt.
import { describe, expect, test } from 'bun:test'
import { ApplicationFailure } from '@temporalio/common'
import { WebhookErrorType, type AttemptInput, type AttemptOutcome, type DeliverWebhookInput } from '../../../workflows/contract-webhooks'
import { useTimeSkipping, within } from '../support/time-skipping'

const ts = useTimeSkipping('webhooks')

const S = 1000
const M = 60 * S
const H = 60 * M
// The production default of WEBHOOK_RETRY_SCHEDULE (api/platform/config.ts): 0,5s,5m,30m,2h,5h,10h,10h.
const SCHEDULE = [0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]

interface Call extends AttemptInput {
  at: number
}

/** Runs one delivery whose attempts answer `answer(call number)`. Returns the result, every call with its time on the
 *  server's clock, the timers the workflow set (seconds, in order) and each attempt's wait after the one before. */
async function deliver(answer: (n: number, input: AttemptInput) => AttemptOutcome, input: Partial<DeliverWebhookInput> = {}) {
  const calls: Call[] = []
  return ts.withWorker(
    {
      async attemptWebhookDelivery(a: AttemptInput): Promise<AttemptOutcome> {
        calls.push({ ...a, at: await ts.env.currentTimeMs() })
        return answer(calls.length, a)
      },
    },
    async (taskQueue) => {
      const handle = await ts.env.client.workflow.start('deliverWebhookWorkflow', {
        taskQueue,
        workflowId: `webhook-${crypto.randomUUID()}`,
        args: [{ tenantId: 't1', messageId: 'm1', scheduleMs: SCHEDULE, retryAfterMaxMs: H, ...input } satisfies DeliverWebhookInput],
      })
      const result = await handle.result()
      const timers = (await handle.fetchHistory()).events!.flatMap((e) => {
        const t = e.timerStartedEventAttributes?.startToFireTimeout
        return t ? [Number(t.seconds ?? 0) + (t.nanos ?? 0) / 1e9] : []
      })
      const gaps = calls.slice(1).map((c, i) => (c.at - calls[i]!.at) / S)
      return { result, calls, timers, gaps }
    },
  )
}

const secs = (delays: number[]) => delays.map((d) => d / S)

describe('the retry schedule', () => {
  test('a receiver that always fails gets one attempt per delay of the schedule, each after the previous, then the message fails', async () => {
    const { result, calls, timers, gaps } = await deliver(() => ({ result: 'failed', retryAfterMs: null }))
    expect(result).toEqual({ status: 'failed', attempts: SCHEDULE.length })
    expect(timers).toEqual(secs(SCHEDULE.slice(1)))
    expect(within(gaps, secs(SCHEDULE.slice(1)))).toEqual(secs(SCHEDULE.slice(1)))
    expect(calls.map((c) => [c.attempt, c.last, c.slotReserved])).toEqual(SCHEDULE.map((_, i) => [i + 1, i === SCHEDULE.length - 1, false]))
  }, 60_000)

  test('a first delay is waited before the first attempt', async () => {
    const { timers, calls } = await deliver(() => ({ result: 'failed', retryAfterMs: null }), { scheduleMs: [10 * M, 1 * H] })
    expect(timers).toEqual([600, 3600])
    expect(calls.length).toBe(2)
  }, 60_000)

  test('a delivery ends the schedule: no attempt and no wait after it', async () => {
    const { result, calls, timers } = await deliver((n) => (n === 3 ? { result: 'delivered', status: 204 } : { result: 'failed', retryAfterMs: null }))
    expect(result).toEqual({ status: 'succeeded', attempts: 3 })
    expect(timers).toEqual(secs(SCHEDULE.slice(1, 3)))
    expect(calls.length).toBe(3)
  }, 60_000)

  test('a stop (410, the endpoint disabled for failing) ends it as failed at that attempt', async () => {
    const { result, calls, timers } = await deliver((n) => (n === 2 ? { result: 'stopped', reason: 'failing' } : { result: 'failed', retryAfterMs: null }))
    expect(result).toEqual({ status: 'failed', attempts: 2 })
    expect([calls.length, timers.length]).toEqual([2, 1])
  }, 60_000)

  test('the message gone (tenant or endpoint deleted) ends it at once, without a retry of the activity', async () => {
    const { result, calls, timers } = await deliver((n) => {
      if (n === 2) throw ApplicationFailure.create({ type: WebhookErrorType.messageGone, message: 'message m1 is gone', nonRetryable: true })
      return { result: 'failed', retryAfterMs: null }
    })
    expect(result).toEqual({ status: 'failed', attempts: 1 })
    expect([calls.length, timers.length]).toEqual([2, 1])
  }, 60_000)
})

describe('our own side failing within an attempt', () => {
  test('retries the attempt after 1 s, then 2 s, on server timers, and the delivery counts one attempt', async () => {
    const { result, calls, timers, gaps } = await deliver((n) => {
      if (n < 3) throw new Error('connection to Postgres lost')
      return { result: 'delivered', status: 204 }
    })
    expect(result).toEqual({ status: 'succeeded', attempts: 1 })
    expect(calls.map((c) => c.attempt)).toEqual([1, 1, 1])
    expect(timers).toEqual([1, 2])
    expect(within(gaps, [1, 2])).toEqual([1, 2])
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
    const { result, timers, gaps } = await deliver((n) => answers[n - 1]!)
    expect(result).toEqual({ status: 'succeeded', attempts: 4 })
    expect(timers).toEqual(secs([40 * M, 5 * M, 1 * H]))
    expect(within(gaps, timers)).toEqual(timers)
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
    const { result, calls, timers } = await deliver((n) => answers[n - 1]!)
    expect(result).toEqual({ status: 'succeeded', attempts: 2 })
    expect(calls.map((c) => [c.attempt, c.slotReserved])).toEqual([
      [1, false],
      [1, true],
      [1, true],
      [2, false],
    ])
    expect(timers).toEqual(secs([20 * M, 3 * M, 5 * S]))
  }, 60_000)
})
