// The offboarding part of the Temporal contract (see contract.ts for the rules): names, ids and payloads the API,
// the worker and the offboarding workflow share. Types and constants only.
export const OffboardingWorkflowType = { offboard: 'tenantOffboardingWorkflow' } as const

/** One workflow per request; the tenant in the id lets an operator find a tenant's offboarding at a glance. */
export const offboardingWorkflowId = (tenantId: string, requestId: string) => `tenant-offboarding/${tenantId}/${requestId}`

/** The signal DELETE /v1/tenants/current/offboarding sends after it has reactivated the tenant: the workflow ends. */
export const OFFBOARDING_CANCEL_SIGNAL = 'offboardingCancelled'

export const OffboardingErrorType = {
  /** The request row is gone (tenant deleted) or no longer open: nothing left to do. */
  requestNotOpen: 'OffboardingRequestNotOpen',
  /** The tenant has no ready export bucket: there is nowhere to write the export. */
  exportBucketMissing: 'OffboardingExportBucketMissing',
} as const

export interface TenantOffboardingInput {
  tenantId: string
  requestId: string
  /** The window's end as an ISO time, fixed by the request: the timer waits until then. */
  windowEndsAt: string
}

/** Where and what the export is, fixed once and kept in the history: a retry writes the same objects. */
export interface TenantExportPlan {
  tenantId: string
  requestId: string
  regionId: string
  bucket: string
  /** Every object of the export is under it: `<prefix>rows.ndjson.gz`, `<prefix>objects.ndjson.gz`, `<prefix>manifest.dsse.json`. */
  prefix: string
  /** The tenant's buckets whose objects the object manifest lists. */
  buckets: string[]
  /** The audit chain's head when the export was cut. */
  auditChainHead: { seq: number; hash: string | null }
}

export interface TenantExportResult {
  rows: number
  objects: number
  /** SHA-256 of the signed manifest's payload. */
  manifestSha256: string
}

export type OffboardingOutcome = 'cancelled' | 'window_elapsed'
