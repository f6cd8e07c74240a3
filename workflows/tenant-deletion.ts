import { ActivityFailure, ApplicationFailure, CancellationScope, continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow'
// Type-only: activity code (S3, Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { TenantDeletionErrorType, type DeletionProgress, type TenantDeletionInput, type TenantDeletionOutcome } from './contract-tenant-deletion'

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' }
const permanent = Object.values(TenantDeletionErrorType)

const { claimTenantDeletion, revokeTenantCredentials, finalEventSettled, disableTenantWebhooks, writeDeletionReceipt } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { ...retry, maximumAttempts: 10, nonRetryableErrorTypes: permanent },
})

// Each call deletes batches for a bounded time and answers where the job stands; the heartbeat (one per batch), not
// the timeout, notices a dead worker, and the retry resumes from the cursor each batch committed with its rows.
// The input may shorten the heartbeat timeout: a test that kills the worker then waits seconds for the server to notice.
const batchCalls = (heartbeatTimeoutMs?: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: heartbeatTimeoutMs ?? '30 seconds',
    retry: { ...retry, maximumAttempts: 20, nonRetryableErrorTypes: permanent },
  })

// Recording failure must outlast a flaky database: more attempts, same short call.
const { failTenantDeletion } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 30 },
})

const failureMessage = (err: unknown) =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.message : String((err as Error)?.message ?? err)

const DEFAULT_HISTORY_LIMIT = 5000

/** credentials (revoke sessions, PATs, SSO; the final tenant.deleted event; then the endpoints) → buckets (emptied,
 *  removed) → rows (table by table, in batches) → receipt. The job row holds the cursor, so a run continued as new, or a
 *  retried job, carries on where the last committed batch left it. The run's first id is its claim on the job. */
export async function tenantDeletionWorkflow(input: TenantDeletionInput): Promise<TenantDeletionOutcome> {
  const claim = workflowInfo().firstExecutionRunId
  const limit = input.historyLimit ?? DEFAULT_HISTORY_LIMIT
  const { deleteTenantBatches } = batchCalls(input.heartbeatTimeoutMs)
  let p: DeletionProgress
  try {
    p = await claimTenantDeletion(input, claim)
    while (p.phase !== 'done' && !p.blocked) {
      if (p.phase === 'credentials' && p.stepIndex === 0) p = await revokeTenantCredentials(input, claim)
      else if (p.phase === 'credentials') {
        // The final event goes out before the endpoints that receive it are disabled; a receiver that never answers
        // holds the job up for TENANT_DELETION_FINAL_EVENT_WAIT_SECONDS at most (the activity judges).
        if (!(await finalEventSettled(input, claim))) await sleep('2 seconds')
        else p = await disableTenantWebhooks(input, claim)
      } else if (p.phase === 'receipt') p = await writeDeletionReceipt(input, claim)
      else p = await deleteTenantBatches(input, claim)
      const info = workflowInfo()
      if (info.continueAsNewSuggested || info.historyLength >= limit) break
    }
  } catch (err) {
    await CancellationScope.nonCancellable(() => failTenantDeletion(input, claim, failureMessage(err)))
    throw err
  }
  if (p.phase !== 'done' && !p.blocked) return continueAsNew<typeof tenantDeletionWorkflow>(input)
  return p.blocked ? 'blocked' : 'succeeded'
}
