import { ActivityFailure, CancellationScope, proxyActivities } from '@temporalio/workflow'
// Type-only: activity code (S3, Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { ErrorType } from './contract'
import { ModelsErrorType, type ValidateModelVersionInput, type ValidationOutcome } from './contract-models'
import { StorageErrorType } from './contract-storage'

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' }

// A long read: the heartbeat, not the overall timeout, notices a dead worker; the retry skips what was measured.
const { measureModelVersionObjects } = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '15 seconds',
  retry: {
    ...retry,
    maximumAttempts: 5,
    nonRetryableErrorTypes: [ErrorType.invalidArgument, ModelsErrorType.versionNotValidating, StorageErrorType.regionUnknown],
  },
})

// Recording the outcome must outlast a database hiccup: many attempts of a short, idempotent call.
const { recordModelVersionValidation } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 20, nonRetryableErrorTypes: [ErrorType.invalidArgument] },
})

const failureMessage = (err: unknown) => (err instanceof ActivityFailure && err.cause ? err.cause.message : String((err as Error)?.message ?? err))

/** validating → ready | failed. A check that cannot finish (storage gone for good, retries spent) fails the version
 *  with that reason rather than leaving it validating forever. */
export async function validateModelVersionWorkflow(input: ValidateModelVersionInput): Promise<ValidationOutcome['status']> {
  let outcome: ValidationOutcome
  try {
    outcome = await measureModelVersionObjects(input)
  } catch (err) {
    outcome = { status: 'failed', reason: `validation could not finish: ${failureMessage(err)}` }
  }
  await CancellationScope.nonCancellable(() => recordModelVersionValidation(input, outcome))
  return outcome.status
}
