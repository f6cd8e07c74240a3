import { log, proxyActivities } from '@temporalio/workflow'
// Type-only: activity code (Postgres, Node APIs) must never be bundled into the workflow sandbox.
import type { createActivities } from '../activities'
import { ErrorType, HOUSEKEEPING_DEFAULT_BATCH_SIZE, type HousekeepingInput, type HousekeepingResult } from './contract'

const { purgeExpiredIdempotencyKeys, purgeExpiredSessions } = proxyActivities<ReturnType<typeof createActivities>>({
  // A purge of a large backlog is many short batches; heartbeats, not the overall timeout, detect a dead worker.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '1 minute',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    // The next scheduled run picks up whatever this one could not finish, so there is no point retrying forever.
    maximumAttempts: 5,
    nonRetryableErrorTypes: [ErrorType.invalidArgument],
  },
})

/** Purges expired idempotency keys and dead sessions. Scheduled by the worker (worker/schedules.ts). */
export async function housekeepingWorkflow(input: HousekeepingInput = {}): Promise<HousekeepingResult> {
  const batchSize = input.batchSize ?? HOUSEKEEPING_DEFAULT_BATCH_SIZE
  // Independent tables: purge them concurrently.
  const [idempotencyKeysPurged, sessionsPurged] = await Promise.all([
    purgeExpiredIdempotencyKeys(batchSize),
    purgeExpiredSessions(batchSize),
  ])
  log.info('housekeeping done', { idempotencyKeysPurged, sessionsPurged })
  return { idempotencyKeysPurged, sessionsPurged }
}
