// workflows/billing.ts on the time-skipping server: a debt's grace timer moves it to unpaid when the grace period has
// passed and not before; a plan missing from the price book fails the close without retries.
import { describe, expect, test } from 'bun:test'
import { WorkflowFailedError } from '@temporalio/client'
import { ApplicationFailure } from '@temporalio/common'
import { BillingErrorType } from '../../../workflows/contract-billing'
import { useTimeSkipping } from '../support/time-skipping'

const ts = useTimeSkipping('billing')
// The sweep starts its closes as children with the TenantId search attribute, which this server does not know: it runs
// against the real servers in test/billing/period-close.test.ts.
const GRACE_S = 7 * 24 * 3600

describe('payment grace', () => {
  test('the timer ends when the grace period does, and then asks once for the same debt', async () => {
    ts.calls.clear()
    const result = await ts.withWorker(
      {
        async expirePaymentGrace(tenantId: string, since: string) {
          await ts.calls.record('expire', tenantId, since)
          return true
        },
      },
      async (taskQueue) => {
        const startedAt = await ts.env.currentTimeMs()
        await ts.calls.record('start')
        const since = new Date(startedAt).toISOString()
        const out = await ts.env.client.workflow.execute('paymentGraceWorkflow', {
          taskQueue,
          workflowId: `payment-grace/t1/${since}`,
          args: [{ tenantId: 't1', pastDueSince: since, graceEndsAt: new Date(startedAt + GRACE_S * 1000).toISOString() }],
        })
        return { out, since }
      },
    )
    expect(result.out).toEqual({ expired: true })
    expect(ts.calls.of('expire').map((c) => c.args)).toEqual([['t1', result.since]])
    const [start, expire] = [ts.calls.of('start')[0]!.at, ts.calls.of('expire')[0]!.at]
    // Not a second early; and no later than the run's own scheduling latency.
    expect((expire - start) / 1000).toBeGreaterThanOrEqual(GRACE_S - 1)
    expect((expire - start) / 1000).toBeLessThan(GRACE_S + 30)
  }, 60_000)

  test('a grace period that has ended already (the API was slow to start the timer) is expired at once', async () => {
    ts.calls.clear()
    const out = await ts.withWorker(
      {
        async expirePaymentGrace(tenantId: string) {
          await ts.calls.record('expire', tenantId)
          return false
        },
      },
      (taskQueue) =>
        ts.env.client.workflow.execute('paymentGraceWorkflow', {
          taskQueue,
          workflowId: `payment-grace/t2/${crypto.randomUUID()}`,
          args: [{ tenantId: 't2', pastDueSince: '2020-01-01T00:00:00.000Z', graceEndsAt: '2020-01-08T00:00:00.000Z' }],
        }),
    )
    expect(out).toEqual({ expired: false })
    expect(ts.calls.of('expire')).toHaveLength(1)
  }, 60_000)
})

describe('the period close', () => {
  test('a plan missing from the price book fails the close at once, not retried for an hour', async () => {
    ts.calls.clear()
    const failed = await ts
      .withWorker(
        {
          async closeInvoicePeriod(tenantId: string) {
            await ts.calls.record('close', tenantId)
            throw ApplicationFailure.create({ type: BillingErrorType.planUnknown, message: 'no such plan', nonRetryable: true })
          },
        },
        (taskQueue) =>
          ts.env.client.workflow.execute('invoiceCloseWorkflow', {
            taskQueue,
            workflowId: `invoice-close/x/${crypto.randomUUID()}`,
            args: [{ tenantId: 'x', period: '2026-10' }],
          }),
      )
      .catch((err) => err)
    expect(failed).toBeInstanceOf(WorkflowFailedError)
    expect(ts.calls.of('close')).toHaveLength(1)
  }, 60_000)
})
