// The long jobs' workflows on the time-skipping server: an edge package build waits out an unreachable storage region
// (10 s apart at most) within its four hours and otherwise records the failure; an audit export and a model check give
// up after 5 attempts (1 s doubling) and record why, rather than leaving the row running.
import { describe, expect, test } from 'bun:test'
import { WorkflowFailedError } from '@temporalio/client'
import { ApplicationFailure } from '@temporalio/common'
import { backoffSeconds, useTimeSkipping } from '../support/time-skipping'

const ts = useTimeSkipping('edge-package', 'audit-export', 'models')
const id = () => crypto.randomUUID()

describe('an edge package build', () => {
  const standIns = (build: (sinceFirst: number) => void) => {
    let first: number | undefined
    return {
      async beginEdgePackageBuild() {
        return { packageId: 'p1', regionId: 'eu' }
      },
      async buildEdgePackageArchive() {
        await ts.calls.record('build')
        first ??= ts.calls.list.at(-1)!.at
        build((ts.calls.list.at(-1)!.at - first) / 1000)
        return { key: 'k' }
      },
      async finishEdgePackageBuild() {
        await ts.calls.record('finish')
      },
      async failEdgePackageBuild(_t: string, _p: string, message: string) {
        await ts.calls.record('fail', message)
      },
    }
  }
  const run = (q: string) =>
    ts.env.client.workflow.execute('buildEdgePackageWorkflow', { taskQueue: q, workflowId: `pkg-${id()}`, args: [{ tenantId: 't1', packageId: 'p1' }] })
  const unreachable = () => ApplicationFailure.create({ type: 'StorageProviderUnavailable', message: 'The storage region cannot be reached' })

  test('a region down for an hour is waited for, retrying at most 10 s apart, and the build then finishes', async () => {
    ts.calls.clear()
    await ts.withWorker(
      standIns((since) => {
        if (since < 3600) throw unreachable()
      }),
      run,
    )
    const tries = ts.calls.of('build').length
    expect(tries).toBeGreaterThan(300)
    const backoff = backoffSeconds(1, 10, tries - 1)
    expect(ts.calls.gapsOf('build', backoff)).toEqual(backoff)
    expect([ts.calls.of('finish').length, ts.calls.of('fail').length]).toEqual([1, 0])
  }, 120_000)

  test('a region that stays down fails the build at four hours, and the failure is recorded', async () => {
    ts.calls.clear()
    const failed = await ts
      .withWorker(
        standIns(() => {
          throw unreachable()
        }),
        run,
      )
      .catch((err) => err)
    expect(failed).toBeInstanceOf(WorkflowFailedError)
    const builds = ts.calls.of('build')
    const over = (ts.calls.of('fail')[0]!.at - builds[0]!.at) / 1000
    expect(over).toBeGreaterThan(4 * 3600 - 10)
    expect(over).toBeLessThan(4 * 3600 + 10)
    expect(ts.calls.of('finish')).toEqual([])
  }, 240_000)
})

describe('an audit export', () => {
  test('a write that keeps failing is tried 5 times, 1 s doubling, then the export is marked failed with its reason', async () => {
    ts.calls.clear()
    const failed = await ts
      .withWorker(
        {
          async beginAuditExport() {
            return { exportId: 'e1' }
          },
          async writeAuditExport() {
            await ts.calls.record('write')
            throw new Error('bucket unwritable')
          },
          async finishAuditExport() {
            await ts.calls.record('finish')
          },
          async failAuditExport(_t: string, _e: string, message: string) {
            await ts.calls.record('fail', message)
          },
        },
        (q) =>
          ts.env.client.workflow.execute('exportAuditLogWorkflow', { taskQueue: q, workflowId: `audit-${id()}`, args: [{ tenantId: 't1', exportId: 'e1' }] }),
        'audit-export',
      )
      .catch((err) => err)
    expect(failed).toBeInstanceOf(WorkflowFailedError)
    expect(ts.calls.gapsOf('write', backoffSeconds(1, 30, 4))).toEqual(backoffSeconds(1, 30, 4))
    expect(ts.calls.of('fail').map((c) => c.args[0])).toEqual(['bucket unwritable'])
  }, 60_000)
})

describe('a model version check', () => {
  test('a measurement that keeps failing is tried 5 times, 1 s doubling, then the version is failed, not left validating', async () => {
    ts.calls.clear()
    const status = await ts.withWorker(
      {
        async measureModelVersionObjects() {
          await ts.calls.record('measure')
          throw new Error('object store timeout')
        },
        async recordModelVersionValidation(_input: unknown, outcome: unknown) {
          await ts.calls.record('record', outcome)
        },
      },
      (q) =>
        ts.env.client.workflow.execute('validateModelVersionWorkflow', {
          taskQueue: q,
          workflowId: `model-${id()}`,
          args: [{ tenantId: 't1', modelVersionId: 'm1' }],
        }),
      'models',
    )
    expect(status).toBe('failed')
    expect(ts.calls.gapsOf('measure', backoffSeconds(1, 30, 4))).toEqual(backoffSeconds(1, 30, 4))
    expect(ts.calls.of('record').map((c) => c.args[0])).toEqual([{ status: 'failed', reason: 'validation could not finish: object store timeout' }])
  }, 60_000)
})
