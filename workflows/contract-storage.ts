// The storage part of the Temporal contract (see contract.ts for the rules): names, ids and payloads the
// API, the worker and the storage workflows share. Types and constants only.
export const StorageWorkflowType = {
  provision: 'provisionStorageWorkflow',
  reconcile: 'reconcileStorageWorkflow',
} as const

/** One provisioning workflow per tenant at a time: a repeated PUT joins the running one by this id. */
export const storageWorkflowIds = {
  provision: (tenantId: string) => `storage-provision/${tenantId}`,
  reconcile: (tenantId: string, jobId: string) => `storage-reconcile/${tenantId}/${jobId}`,
} as const

export const StorageErrorType = {
  /** A bucket of that name exists and is not this tenant's: retrying cannot free the name. */
  bucketConflict: 'StorageBucketConflict',
  /** The region is not (or no longer) in the worker's configuration. */
  regionUnknown: 'StorageRegionUnknown',
  /** The region's endpoint did not answer; retried a few times, then the job fails with this. */
  providerUnavailable: 'StorageProviderUnavailable',
  /** The job row is gone (tenant deleted): nothing left to do. */
  jobNotFound: 'StorageReconciliationJobNotFound',
} as const

export interface ProvisionStorageInput {
  tenantId: string
  regionId: string
  buckets: { kind: 'general' | 'dataset' | 'export'; name: string }[]
}

export interface ReconcileStorageInput {
  tenantId: string
  jobId: string
}

export interface ReconcileStorageResult {
  objectsScanned: number
  orphans: number
  missing: number
}

/** Heartbeat details of the walk: where a retried attempt resumes, and the counts up to that point. */
export interface ReconcileCheckpoint {
  bucketIndex: number
  afterKey: string | null
  objectsScanned: number
  bytesScanned: number
  usage: { kind: string; bucket: string; objectCount: number; bytes: number }[]
}
