// workflows/storage.ts on the time-skipping server: an unreachable region is waited for (1 s doubling to 10 s) for
// up to an hour, and provisioning that fails for good removes what it created, newest first, and records the failure.
import { describe, expect, test } from 'bun:test'
import { ApplicationFailure } from '@temporalio/common'
import { WorkflowFailedError } from '@temporalio/client'
import { StorageErrorType, type ProvisionStorageInput } from '../../../workflows/contract-storage'
import { backoffSeconds, useTimeSkipping } from '../support/time-skipping'

const ts = useTimeSkipping('storage')

const input: ProvisionStorageInput = {
  tenantId: 't1',
  regionId: 'eu',
  buckets: [
    { kind: 'general', name: 'g' },
    { kind: 'dataset', name: 'd' },
    { kind: 'export', name: 'e' },
  ],
}
type Bucket = { kind: string; name: string }

/** Stand-ins whose createTenantBucket answers `create(bucket, seconds since the first call)`. */
function standIns(create: (b: Bucket, sinceFirst: number) => void) {
  let first: number | undefined
  return {
    async createTenantBucket(b: Bucket) {
      await ts.calls.record('create', b.name)
      first ??= ts.calls.list.at(-1)!.at
      create(b, (ts.calls.list.at(-1)!.at - first) / 1000)
    },
    async markStorageBucketReady(_tenant: string, kind: string) {
      await ts.calls.record('ready', kind)
    },
    async removeTenantBucket(b: Bucket) {
      await ts.calls.record('remove', b.name)
    },
    async markStorageFailed(_tenant: string, message: string) {
      await ts.calls.record('failed', message)
    },
  }
}

const unreachable = () => ApplicationFailure.create({ type: StorageErrorType.providerUnavailable, message: 'The storage region cannot be reached' })
const provision = (taskQueue: string) =>
  ts.env.client.workflow.execute('provisionStorageWorkflow', { taskQueue, workflowId: `storage-${crypto.randomUUID()}`, args: [input] })

describe('provisioning', () => {
  test('a region down for 20 minutes is waited for, retrying at most 10 s apart, and provisioning then finishes', async () => {
    ts.calls.clear()
    await ts.withWorker(
      standIns((b, since) => {
        if (b.name === 'g' && since < 20 * 60) throw unreachable()
      }),
      provision,
    )
    const tries = ts.calls.of('create').filter((c) => c.args[0] === 'g').length
    expect(tries).toBeGreaterThan(100) // 20 minutes of retries 10 s apart
    const backoff = backoffSeconds(1, 10, tries - 1)
    expect(ts.calls.gapsOf('create', backoff).slice(0, tries - 1)).toEqual(backoff)
    expect(ts.calls.of('ready').map((c) => c.args[0])).toEqual(['general', 'dataset', 'export'])
    expect(ts.calls.of('remove')).toEqual([])
  }, 60_000)

  test('a region that stays down fails provisioning after an hour; the buckets created are removed, newest first', async () => {
    ts.calls.clear()
    const failed = await ts
      .withWorker(
        standIns((b) => {
          if (b.name === 'd') throw unreachable()
        }),
        provision,
      )
      .catch((err) => err)
    expect(failed).toBeInstanceOf(WorkflowFailedError)
    const tries = ts.calls.of('create').filter((c) => c.args[0] === 'd')
    // The hour (scheduleToCloseTimeout) runs from the first try's scheduling: every try starts within it, and the
    // failure is recorded when it is over, not one retry interval (10 s) later.
    const sinceFirst = (at: number) => (at - tries[0]!.at) / 1000
    expect(sinceFirst(tries.at(-1)!.at)).toBeLessThan(3600)
    expect(sinceFirst(ts.calls.of('failed')[0]!.at)).toBeGreaterThan(3600 - 10)
    expect(sinceFirst(ts.calls.of('failed')[0]!.at)).toBeLessThan(3600 + 10)
    expect(ts.calls.list.filter((c) => c.name === 'remove').map((c) => c.args[0])).toEqual(['d', 'g'])
    expect(ts.calls.of('ready').map((c) => c.args[0])).toEqual(['general'])
  }, 120_000)

  test('a conflict is final at once: no retry, and the same undoing', async () => {
    ts.calls.clear()
    const conflict = ApplicationFailure.create({ type: StorageErrorType.bucketConflict, message: 'taken', nonRetryable: true })
    const failed = await ts
      .withWorker(
        standIns((b) => {
          if (b.name === 'e') throw conflict
        }),
        provision,
      )
      .catch((err) => err)
    expect(failed).toBeInstanceOf(WorkflowFailedError)
    expect(ts.calls.of('create').map((c) => c.args[0])).toEqual(['g', 'd', 'e'])
    expect(ts.calls.of('remove').map((c) => c.args[0])).toEqual(['e', 'd', 'g'])
    expect(ts.calls.of('failed').map((c) => c.args[0])).toEqual(['taken'])
  }, 60_000)
})
