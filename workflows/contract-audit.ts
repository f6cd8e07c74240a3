// The audit part of the Temporal contract (see contract.ts for the rules): names, ids and payloads the API, the
// worker and the export workflow share. Types and constants only.
export const AuditWorkflowType = { export: 'exportAuditLogWorkflow' } as const

/** One workflow per export job; the tenant in the id lets an operator find a tenant's exports at a glance. */
export const auditExportWorkflowId = (tenantId: string, exportId: string) => `audit-export/${tenantId}/${exportId}`

export const AuditErrorType = {
  /** The job row is gone (tenant deleted) or no longer queued/running: nothing left to do. */
  exportNotFound: 'AuditExportNotFound',
  /** The tenant's export bucket is not ready (or its region is no longer configured). */
  exportBucketMissing: 'AuditExportBucketMissing',
} as const

export interface ExportAuditLogInput {
  tenantId: string
  exportId: string
}

/** Everything the file is a function of, fixed once and kept in the history: a retry writes the same bytes. */
export interface AuditExportPlan {
  tenantId: string
  exportId: string
  /** The window as ISO times (Temporal payloads are JSON). */
  from: string
  to: string
  regionId: string
  bucket: string
  objectKey: string
  /** The chain's head when the export was cut: no entry after it is written, however long the export takes. */
  chainHead: { seq: number; hash: string | null }
  batchSize: number
}

export interface AuditExportFile {
  entries: number
  bytes: number
  sha256: string
}

/** Heartbeat details of the writing activity; entriesWritten is also stored on the row for GET. */
export interface AuditExportProgress {
  entriesWritten: number
}
