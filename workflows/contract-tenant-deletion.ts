// The tenant deletion part of the Temporal contract (see contract.ts for the rules). Types and constants only.
export const TenantDeletionWorkflowType = {
  run: 'tenantDeletionWorkflow',
} as const

/** One deletion workflow per tenant: a retried job runs again under the same id, never beside another. */
export const tenantDeletionWorkflowId = (tenantId: string) => `tenant-deletion/${tenantId}`

export const TenantDeletionErrorType = {
  /** The job is not (or no longer) this run's to work on: blocked, finished, or claimed by another run. */
  jobLost: 'TenantDeletionJobLost',
  /** Something of the tenant is still there after every step ran: the receipt is not signed. */
  verificationFailed: 'TenantDeletionVerificationFailed',
} as const

export interface TenantDeletionInput {
  tenantId: string
  jobId: string
  /** Continue as new once the history holds this many events (the server's own suggestion ends a run earlier). */
  historyLimit?: number
  /** The batch calls' heartbeat timeout (default 30 s): how long the server takes to notice a dead worker. */
  heartbeatTimeoutMs?: number
}

export type DeletionPhase = 'credentials' | 'buckets' | 'rows' | 'receipt' | 'done'

/** Where a job stands after an activity: the workflow loops on it. */
export interface DeletionProgress {
  phase: DeletionPhase
  stepIndex: number
  /** Set when a blocker (a legal hold) stopped the job: it is `blocked` and the workflow ends. */
  blocked: string | null
}

export type TenantDeletionOutcome = 'succeeded' | 'blocked'
