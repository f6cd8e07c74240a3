import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fileURLToPath } from 'node:url'
import { DefaultLogger, IllegalStateError, Runtime, Worker } from '@temporalio/worker'
import { DeterminismViolationError } from '@temporalio/workflow'
import { workflowsPath } from '../../worker/run'
import { SYSTEM_TENANT, taskQueues, TENANT_ID, workflowIds, WorkflowType } from '../../workflows/contract'
import { connectTemporal, type TestTemporal } from '../support/temporal'

let t: TestTemporal
beforeAll(async () => {
  // Replay workers log every state change, and the deliberate nondeterminism below as a warning: keep the
  // test output to real problems. The Runtime is per process, so another file may have installed it first.
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: [], telemetryOptions: { logging: { filter: { core: 'ERROR' } } } })
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err
  }
  t = await connectTemporal()
})
afterAll(async () => {
  await t.close()
})

describe('workflow determinism', () => {
  test('a real housekeeping history replays against the current workflow code', async () => {
    const handle = await t.client.workflow.start(WorkflowType.housekeeping, {
      workflowId: workflowIds.housekeeping(t.config, `replay-${crypto.randomUUID()}`),
      taskQueue: taskQueues(t.config).platform,
      args: [{}],
      typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
      workflowExecutionTimeout: '1 minute',
    })
    await handle.result()
    const history = await handle.fetchHistory()
    expect(history.events?.length).toBeGreaterThan(0)

    // Throws DeterminismViolationError (or another failure) if the code no longer produces this history.
    await Worker.runReplayHistory({ workflowsPath }, history, handle.workflowId)

    // The check has teeth: a reordered variant of the workflow is rejected on the same history.
    const reordered = fileURLToPath(new URL('./fixtures/reordered-workflows.ts', import.meta.url))
    const err = await Worker.runReplayHistory({ workflowsPath: reordered }, history, handle.workflowId).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(DeterminismViolationError)
    // Two webpack bundles of the workflow code take seconds on a loaded machine: well past the 5 s default.
  }, 60_000)
})
