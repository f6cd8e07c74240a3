import { continueAsNew, defineQuery, log, proxyActivities, setHandler } from '@temporalio/workflow'
// Type-only: activity code (Postgres, Node APIs) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { ErrorType } from './contract'
import { RESEAL_DEFAULT_BATCH, RESEAL_PROGRESS_QUERY, type ResealCounts, type ResealInput, type ResealProgress } from './contract-keys'

const { listSealedColumns, resealSealedBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // A database outage is waited out: the re-seal must finish before the old key can go.
    nonRetryableErrorTypes: [ErrorType.invalidArgument],
  },
})

const resealProgressQuery = defineQuery<ResealProgress>(RESEAL_PROGRESS_QUERY)

/** Bounds the history: a schema with millions of sealed values continues as new, carrying its cursor and counts. */
const BATCHES_PER_RUN = 200

/** Moves every sealed value to the current key of SECRET_KEY's ring (docs/operations.md "Key rotation"), column by column, in
 *  batches; progress is the `progress` query. Started by `bun scripts/reseal.ts` as reseal/<current key id>. */
export async function resealSecretsWorkflow(input: ResealInput = {}): Promise<Record<string, ResealCounts>> {
  const batchSize = input.batchSize ?? RESEAL_DEFAULT_BATCH
  const columns = await listSealedColumns()
  const totals: Record<string, ResealCounts> = input.resume?.totals ?? {}
  const progress: ResealProgress = { column: null, totals, done: false }
  setHandler(resealProgressQuery, () => progress)
  let batches = 0
  const first = input.resume ? Math.max(0, columns.indexOf(input.resume.column)) : 0
  for (let i = first; i < columns.length; i++) {
    const column = columns[i]!
    const counts = (totals[column] ??= { scanned: 0, resealed: 0, changedMeanwhile: 0, unreadable: 0 })
    progress.column = column
    let after: string | null = i === first ? (input.resume?.after ?? null) : null
    do {
      const r = await resealSealedBatch(column, after, batchSize)
      counts.scanned += r.scanned
      counts.resealed += r.resealed
      counts.changedMeanwhile += r.changedMeanwhile
      counts.unreadable += r.unreadable
      after = r.next
      if (after !== null && ++batches >= BATCHES_PER_RUN) return continueAsNew<typeof resealSecretsWorkflow>({ batchSize, resume: { column, after, totals } })
    } while (after !== null)
  }
  progress.column = null
  progress.done = true
  log.info('re-seal done', { totals })
  return totals
}
