import { ApplicationFailure, Context } from '@temporalio/activity'
import { deleteExpiredKeys } from '../api/idempotency/queries'
import { deleteDeadSessions } from '../api/sessions/queries'
import type { ActivityDeps } from './index'
import { ErrorType, HOUSEKEEPING_DEFAULT_BATCH_SIZE } from '../workflows/contract'

/** Revoked sessions stay a week so recent sign-outs remain visible to audit and support. */
const REVOKED_SESSION_RETENTION = '7 days'

function checkBatchSize(batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) {
    throw ApplicationFailure.create({ type: ErrorType.invalidArgument, message: `batchSize must be an integer in 1..100000, got ${batchSize}` })
  }
  return batchSize
}

/** Deletes in bounded batches until a batch comes back short. Each batch is its own statement (and
 *  transaction), so a backlog of millions never holds locks for long; heartbeats let Temporal notice a
 *  worker that died mid-purge, and deliver cancellation (worker shutdown) so it stops between batches.
 *  Stopping anywhere is harmless: deleting expired rows is idempotent and the next run resumes. */
async function purgeInBatches(deleteBatch: () => Promise<number>, batchSize: number): Promise<number> {
  const ctx = Context.current()
  let total = 0
  for (;;) {
    ctx.cancellationSignal.throwIfAborted()
    const n = await deleteBatch()
    total += n
    ctx.heartbeat({ purged: total })
    if (n < batchSize) return total
  }
}

const runOf = () => ({ workflowId: Context.current().info.workflowExecution?.workflowId })

export function housekeepingActivities({ sql, log }: ActivityDeps) {
  return {
    async purgeExpiredIdempotencyKeys(batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE): Promise<number> {
      const limit = checkBatchSize(batchSize)
      const purged = await purgeInBatches(() => deleteExpiredKeys(sql, limit), limit)
      log.info('purged expired idempotency keys', { purged, ...runOf() })
      return purged
    },

    async purgeExpiredSessions(batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE): Promise<number> {
      const limit = checkBatchSize(batchSize)
      const purged = await purgeInBatches(() => deleteDeadSessions(sql, limit, REVOKED_SESSION_RETENTION), limit)
      log.info('purged expired sessions', { purged, ...runOf() })
      return purged
    },
  }
}
