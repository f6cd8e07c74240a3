// The keys part of the Temporal contract (see contract.ts for the rules): the re-seal after a rotation of
// SECRET_KEY (docs/operations.md "Key rotation"). Types and constants only.
export const KeysWorkflowType = { reseal: 'resealSecretsWorkflow' } as const

/** One re-seal per current key: starting it again while it runs attaches to the same run. */
export const resealWorkflowId = (currentKeyId: string) => `reseal/${currentKeyId}`

/** The query that answers a ResealProgress. */
export const RESEAL_PROGRESS_QUERY = 'progress'

export const RESEAL_DEFAULT_BATCH = 500

export interface ResealCounts {
  scanned: number
  resealed: number
  /** Values rewritten by their owner between the read and the swap (already under the current key). */
  changedMeanwhile: number
  /** Values no key of SECRET_KEY opens (their key was removed before they were re-sealed): left as they are. */
  unreadable: number
}

export interface ResealInput {
  batchSize?: number
  /** Where a run that continued as new resumes, and what it had counted. */
  resume?: { column: string; after: string; totals: Record<string, ResealCounts> }
}

export interface ResealProgress {
  /** The column being re-sealed; null once every column is done. */
  column: string | null
  totals: Record<string, ResealCounts>
  done: boolean
}
