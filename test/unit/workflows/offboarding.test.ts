// workflows/offboarding.ts on the time-skipping server: the export, then the retention window as a durable timer that
// ends at windowEndsAt (30 days here) unless the cancel signal comes first; a failed export leaves the window running.
import { describe, expect, test } from 'bun:test'
import { ApplicationFailure } from '@temporalio/common'
import { OFFBOARDING_CANCEL_SIGNAL, OffboardingErrorType, type TenantOffboardingInput } from '../../../workflows/contract-offboarding'
import { useTimeSkipping } from '../support/time-skipping'

const ts = useTimeSkipping('offboarding')
const DAY_MS = 86_400_000

/** Stand-ins that record each call at the server's time; `elapsed` is what offboardingWindowElapsed answers. */
function standIns(o: { writeFails?: boolean; elapsed?: boolean } = {}) {
  return {
    async planTenantExport(input: TenantOffboardingInput) {
      await ts.calls.record('plan')
      return {
        tenantId: input.tenantId,
        requestId: input.requestId,
        regionId: 'r',
        bucket: 'b',
        prefix: 'p/',
        buckets: ['b'],
        auditChainHead: { seq: 1, hash: null },
      }
    },
    async writeTenantExport() {
      await ts.calls.record('write')
      if (o.writeFails) throw ApplicationFailure.create({ type: OffboardingErrorType.exportBucketMissing, message: 'no bucket', nonRetryable: true })
      return { rows: 3, objects: 1, manifestSha256: 'ab' }
    },
    async finishTenantExport() {
      await ts.calls.record('finish')
    },
    async failTenantExport(_t: string, _r: string, reason: string) {
      await ts.calls.record('fail', reason)
    },
    async offboardingWindowElapsed() {
      await ts.calls.record('elapsed')
      return o.elapsed ?? true
    },
  }
}

async function inputFor(days: number): Promise<TenantOffboardingInput> {
  const now = await ts.env.currentTimeMs()
  return { tenantId: 't1', requestId: crypto.randomUUID(), windowEndsAt: new Date(now + days * DAY_MS).toISOString() }
}

const start = (taskQueue: string, input: TenantOffboardingInput) =>
  ts.env.client.workflow.start('tenantOffboardingWorkflow', { taskQueue, workflowId: `tenant-offboarding/t1/${input.requestId}`, args: [input] })

describe('the offboarding workflow', () => {
  test('exports, then waits out the whole window before marking it elapsed', async () => {
    ts.calls.clear()
    const input = await inputFor(30)
    const outcome = await ts.withWorker(standIns(), async (q) => (await start(q, input)).result())
    expect(outcome).toBe('window_elapsed')
    expect(ts.calls.list.map((c) => c.name)).toEqual(['plan', 'write', 'finish', 'elapsed'])
    const elapsedAt = ts.calls.of('elapsed')[0]!.at
    expect(elapsedAt).toBeGreaterThanOrEqual(Date.parse(input.windowEndsAt))
    expect(elapsedAt - Date.parse(input.windowEndsAt)).toBeLessThan(60_000)
  }, 60_000)

  test('the cancel signal ends it before the window does, and nothing is marked elapsed', async () => {
    ts.calls.clear()
    const input = await inputFor(30)
    const outcome = await ts.withWorker(standIns(), async (q) => {
      const handle = await start(q, input)
      // Time stands still until the result is awaited: the export has finished, the timer has not fired.
      while (ts.calls.of('finish').length === 0) await Bun.sleep(20)
      await handle.signal(OFFBOARDING_CANCEL_SIGNAL)
      return { result: await handle.result(), closedAt: (await handle.describe()).closeTime }
    })
    expect(outcome.result).toBe('cancelled')
    expect(ts.calls.of('elapsed')).toEqual([])
    expect(outcome.closedAt!.getTime()).toBeLessThan(Date.parse(input.windowEndsAt))
  }, 60_000)

  test('a failed export is recorded and the window still runs to its end', async () => {
    ts.calls.clear()
    const input = await inputFor(1)
    const outcome = await ts.withWorker(standIns({ writeFails: true }), async (q) => (await start(q, input)).result())
    expect(outcome).toBe('window_elapsed')
    expect(ts.calls.list.map((c) => c.name)).toEqual(['plan', 'write', 'fail', 'elapsed'])
    expect(ts.calls.of('fail')[0]!.args[0]).toBe('no bucket')
    expect(ts.calls.of('elapsed')[0]!.at).toBeGreaterThanOrEqual(Date.parse(input.windowEndsAt))
  }, 60_000)

  test('a request cancelled whose signal was lost ends as cancelled at the window', async () => {
    ts.calls.clear()
    const outcome = await ts.withWorker(standIns({ elapsed: false }), async (q) => (await start(q, await inputFor(2))).result())
    expect(outcome).toBe('cancelled')
  }, 60_000)
})
