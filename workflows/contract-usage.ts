// The usage part of the Temporal contract (see contract.ts for the rules). Types and constants only.
export const UsageWorkflowType = {
  storageSample: 'sampleStorageUsageWorkflow',
} as const

/** Storage is metered in byte-hours: one sample an hour, each adding the stored bytes times one hour. */
export const STORAGE_SAMPLE_EVERY_MS = 3_600_000

/** A singleton per deployment, as housekeeping: the prefix keeps two deployments in one namespace apart. */
export const storageSampleScheduleId = (config: { TEMPORAL_TASK_QUEUE_PREFIX: string }) => `${config.TEMPORAL_TASK_QUEUE_PREFIX}-usage-storage-sample`

export interface StorageSampleResult {
  /** The hour sampled (its start, ISO 8601): the events' time and part of their keys, so a second run in the same
   *  hour records nothing new. */
  hour: string
  tenants: number
  recorded: number
}
