import { ApplicationFailure } from '@temporalio/activity'
import { resealBatch, SEALED_COLUMNS, sealedColumnNamed, type ResealBatchResult } from './reseal-batch'
import { ErrorType } from '../workflows/contract'
import type { ActivityDeps } from './deps'

/** The re-seal's activities (workflows/reseal.ts): which columns there are, and one batch of one of them. */
export function resealActivities(deps: ActivityDeps) {
  return {
    async listSealedColumns(): Promise<string[]> {
      return SEALED_COLUMNS.map((c) => c.name)
    },

    /** Idempotent: a value already under the current key is skipped, so a retried batch does no harm. */
    async resealSealedBatch(columnName: string, after: string | null, batchSize: number): Promise<ResealBatchResult> {
      const column = sealedColumnNamed(columnName)
      if (!column) throw ApplicationFailure.create({ type: ErrorType.invalidArgument, message: `no sealed column ${columnName}`, nonRetryable: true })
      const result = await resealBatch(deps, column, after, batchSize)
      if (result.resealed > 0) deps.log.info('re-sealed a batch', { column: columnName, ...result, next: undefined })
      return result
    },
  }
}
