// workflows/housekeeping.ts on the time-skipping server: a purge that keeps failing is retried 5 times (5 s doubling)
// and then left to the next scheduled run; events are purged only once the messages that need them are, and expiry
// warnings are given only once expired project memberships are removed.
import { describe, expect, test } from 'bun:test'
import { WorkflowFailedError } from '@temporalio/client'
import { backoffSeconds, useTimeSkipping } from '../support/time-skipping'

const ts = useTimeSkipping('housekeeping')

const PURGES = [
  'purgeExpiredIdempotencyKeys',
  'purgeExpiredSessions',
  'purgeExpiredAuditEntries',
  'purgeExpiredWebhookMessages',
  'purgeExpiredEvents',
  'purgeIdleRateBudgets',
  'purgeExpiredProjectMembers',
  'warnExpiringProjectMembers',
  'purgeRetiredCredentials',
  'purgeExpiredDeviceGrants',
] as const

/** Stand-ins that purge `n` rows each, except where `fail(name, call number)` says to throw. */
function standIns(fail: (name: string, n: number) => boolean = () => false) {
  const counts: Record<string, number> = {}
  return Object.fromEntries(
    PURGES.map((name, i) => [
      name,
      async (batch?: number) => {
        await ts.calls.record(name, batch)
        counts[name] = (counts[name] ?? 0) + 1
        if (fail(name, counts[name]!)) throw new Error(`${name} failed`)
        await ts.calls.record(`${name} done`)
        return i + 1
      },
    ]),
  )
}

const run = (taskQueue: string, batchSize?: number) =>
  ts.env.client.workflow.execute('housekeepingWorkflow', {
    taskQueue,
    workflowId: `housekeeping-${crypto.randomUUID()}`,
    args: [batchSize === undefined ? {} : { batchSize }],
  })

describe('housekeeping', () => {
  test('purges every table once and reports the counts', async () => {
    ts.calls.clear()
    const result = await ts.withWorker(standIns(), (q) => run(q, 50))
    expect(result).toEqual({
      idempotencyKeysPurged: 1,
      sessionsPurged: 2,
      auditEntriesPurged: 3,
      webhookMessagesPurged: 4,
      eventsPurged: 5,
      rateBudgetsPurged: 6,
      projectMembersPurged: 7,
      projectMembersWarned: 8,
      retiredDigestsPurged: 9,
      deviceGrantsPurged: 10,
    })
    expect(PURGES.map((p) => ts.calls.of(p).map((c) => c.args[0]))).toEqual(PURGES.map(() => [50]))
  }, 60_000)

  test('a purge that keeps failing is tried 5 times, 5 s doubling, then the run fails for the next one to finish', async () => {
    ts.calls.clear()
    const failed = await ts
      .withWorker(
        standIns((name) => name === 'purgeExpiredSessions'),
        (q) => run(q),
      )
      .catch((err) => err)
    expect(failed).toBeInstanceOf(WorkflowFailedError)
    expect(ts.calls.gapsOf('purgeExpiredSessions', backoffSeconds(5, 120, 4))).toEqual(backoffSeconds(5, 120, 4))
  }, 60_000)

  test('events wait for the messages purge, through its retries', async () => {
    ts.calls.clear()
    await ts.withWorker(
      standIns((name, n) => name === 'purgeExpiredWebhookMessages' && n <= 2),
      (q) => run(q),
    )
    expect(ts.calls.gapsOf('purgeExpiredWebhookMessages', [5, 10])).toEqual([5, 10])
    const messagesDone = ts.calls.of('purgeExpiredWebhookMessages done')[0]!.at
    expect(ts.calls.of('purgeExpiredEvents').map((c) => c.at >= messagesDone)).toEqual([true])
    // The independent purges did not wait for it.
    expect(ts.calls.of('purgeExpiredSessions done')[0]!.at).toBeLessThan(ts.calls.of('purgeExpiredWebhookMessages')[1]!.at)
  }, 60_000)

  test('expiry warnings start only once expired memberships are removed, through its retries, and retry alike', async () => {
    ts.calls.clear()
    await ts.withWorker(
      standIns((name, n) => (name === 'purgeExpiredProjectMembers' || name === 'warnExpiringProjectMembers') && n <= 2),
      (q) => run(q),
    )
    expect(ts.calls.gapsOf('purgeExpiredProjectMembers', [5, 10])).toEqual([5, 10])
    const purged = ts.calls.of('purgeExpiredProjectMembers done')[0]!.at
    expect(ts.calls.of('warnExpiringProjectMembers').every((c) => c.at >= purged)).toBe(true)
    expect(ts.calls.gapsOf('warnExpiringProjectMembers', [5, 10])).toEqual([5, 10])
    expect(ts.calls.of('warnExpiringProjectMembers done').length).toBe(1)
  }, 60_000)
})
