import { ActivityFailure, ApplicationFailure, CancellationScope, proxyActivities } from '@temporalio/workflow'
// Type-only: activity code (S3, Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { ErrorType } from './contract'
import { StorageErrorType, type ProvisionStorageInput, type ReconcileStorageInput, type ReconcileStorageResult } from './contract-storage'

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' }
const permanent = [ErrorType.invalidArgument, StorageErrorType.bucketConflict, StorageErrorType.regionUnknown, StorageErrorType.jobNotFound]

const { markStorageBucketReady, beginReconciliation, finishReconciliation } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 5, nonRetryableErrorTypes: permanent },
})

// A region that cannot be reached is waited for, 1 s doubling to 10 s, for up to an hour: provisioning finishes
// when it returns instead of failing. Any other failure the activity itself makes final from its fifth attempt.
const { createTenantBucket } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', nonRetryableErrorTypes: permanent },
})

// Undoing and recording failure must outlast a flaky endpoint: more attempts, same short calls.
const { removeTenantBucket, markStorageFailed, failReconciliation } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 20, nonRetryableErrorTypes: [StorageErrorType.regionUnknown] },
})

// A long walk: the heartbeat, not the overall timeout, notices a dead worker, and the retry resumes from
// the last heartbeat's checkpoint.
const { walkTenantStorage } = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '10 seconds',
  retry: { ...retry, maximumAttempts: 5, nonRetryableErrorTypes: permanent },
})

const failureType = (err: unknown) => (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.type : undefined)
const failureMessage = (err: unknown) => (err instanceof ActivityFailure && err.cause ? err.cause.message : String((err as Error)?.message ?? err))

/** Creates the general, dataset and export buckets in order. If any step fails for good, the buckets this
 *  run created are removed again and the tenant's storage is marked failed: never half provisioned. */
export async function provisionStorageWorkflow(input: ProvisionStorageInput): Promise<void> {
  const attempted: ProvisionStorageInput['buckets'] = []
  try {
    for (const b of input.buckets) {
      attempted.push(b)
      await createTenantBucket({ regionId: input.regionId, tenantId: input.tenantId, kind: b.kind, name: b.name })
      await markStorageBucketReady(input.tenantId, b.kind)
    }
  } catch (err) {
    await CancellationScope.nonCancellable(async () => {
      // Newest first; each removal checks the bucket is this run's own, so a foreign one is never touched.
      for (const b of [...attempted].reverse()) {
        await removeTenantBucket({ regionId: input.regionId, tenantId: input.tenantId, kind: b.kind, name: b.name })
      }
      await markStorageFailed(input.tenantId, failureMessage(err))
    })
    throw err
  }
}

/** queued → running → succeeded | failed. The job row carries the outcome; the workflow fails too, so the
 *  Temporal UI shows the same thing. */
export async function reconcileStorageWorkflow(input: ReconcileStorageInput): Promise<ReconcileStorageResult> {
  try {
    const plan = await beginReconciliation(input.tenantId, input.jobId)
    const checkpoint = await walkTenantStorage(plan)
    return await finishReconciliation(plan, checkpoint)
  } catch (err) {
    const code = failureType(err) === StorageErrorType.providerUnavailable ? 'STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE' : 'RECONCILIATION_FAILED'
    await CancellationScope.nonCancellable(() => failReconciliation(input.tenantId, input.jobId, code, failureMessage(err)))
    throw err
  }
}
