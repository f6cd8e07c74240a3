import { ActivityFailure, ApplicationFailure, CancellationScope, proxyActivities } from '@temporalio/workflow'
// Type-only: activity code (S3, Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { ErrorType } from './contract'
import { EdgePackageErrorType, type BuildEdgePackageInput } from './contract-edge-packages'

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' }
const permanent = [ErrorType.invalidArgument, ...Object.values(EdgePackageErrorType)]

const { beginEdgePackageBuild, finishEdgePackageBuild } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 10, nonRetryableErrorTypes: permanent },
})

// Long and streaming: the heartbeat, not the overall timeout, notices a dead worker; the retry rebuilds from the
// plan in the history and so writes the same bytes. An unreachable storage region is waited for (1 s doubling to
// 10 s, so the build resumes within seconds of its return) rather than counted: the activity makes any other
// failure final at its fifth attempt, and the whole step, the build's two hours and an outage's wait, is bounded
// at four hours.
const { buildEdgePackageArchive } = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  scheduleToCloseTimeout: '4 hours',
  heartbeatTimeout: '10 seconds',
  retry: { ...retry, maximumInterval: '10 seconds', nonRetryableErrorTypes: permanent },
})

// Recording failure must outlast a flaky database: more attempts, same short call.
const { failEdgePackageBuild } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 30 },
})

const failureMessage = (err: unknown) =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.message : String((err as Error)?.message ?? err)

/** queued → building → ready | failed. The row carries the outcome and its event; the workflow fails too, so the
 *  Temporal UI shows the same thing. */
export async function buildEdgePackageWorkflow(input: BuildEdgePackageInput): Promise<void> {
  try {
    const plan = await beginEdgePackageBuild(input.tenantId, input.packageId)
    const artifact = await buildEdgePackageArchive(plan)
    await finishEdgePackageBuild(plan, artifact)
  } catch (err) {
    await CancellationScope.nonCancellable(() => failEdgePackageBuild(input.tenantId, input.packageId, failureMessage(err)))
    throw err
  }
}
