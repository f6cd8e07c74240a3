import { z } from 'zod'
import { REGION_ID_PATTERN } from './regions'
import { PageQuery } from '../platform/pagination'

export const StorageRegionDto = z
  .object({
    id: z.string(),
    name: z.string(),
    available: z.boolean(),
  })
  .meta({ id: 'StorageRegionDto' })

export const StorageRegionsResponseDto = z
  .object({
    regions: z.array(StorageRegionDto),
    defaultRegionId: z.string(),
  })
  .meta({ id: 'StorageRegionsResponseDto' })

const BucketKind = z.enum(['general', 'dataset', 'export'])

export const StorageBucketSummaryDto = z
  .object({
    name: z.string(),
    kind: BucketKind,
    regionId: z.string(),
    status: z.enum(['provisioning', 'ready', 'failed']),
    versioning: z.boolean(),
    /** Objects older than this many days are expired by a lifecycle rule; null when nothing expires. */
    expireAfterDays: z.number().int().nullable(),
    failureReason: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'StorageBucketSummaryDto' })

export const StorageBucketSetDto = z
  .object({
    bucket: StorageBucketSummaryDto.nullable(),
    datasetBucket: StorageBucketSummaryDto.nullable(),
    exportBucket: StorageBucketSummaryDto.nullable(),
  })
  .meta({ id: 'StorageBucketSetDto' })

export const ProvisionStorageBucketBodyDto = z
  .strictObject({
    regionId: z
      .string()
      .min(1)
      .max(64)
      // Region ids are checked against this shape when the configuration is read (api/storage/regions.ts); an id that
      // fits it but names no available region stays STORAGE_REGION_NOT_AVAILABLE, so the shape is stated, not enforced.
      .meta({ pattern: REGION_ID_PATTERN })
      .describe('One of GET /v1/storage-regions'),
  })
  .meta({ id: 'ProvisionStorageBucketBodyDto' })

export const StorageSummaryQuery = z.object({
  refresh: z.enum(['true', 'false']).optional(),
})

export const TenantStorageSummaryDto = z
  .object({
    regionId: z.string(),
    buckets: z.array(z.object({ bucket: z.string(), kind: BucketKind, objectCount: z.number().int(), bytes: z.number().int() })),
    totalObjects: z.number().int(),
    totalBytes: z.number().int(),
    computedAt: z.iso.datetime(),
  })
  .meta({ id: 'TenantStorageSummaryDto' })

export const CreateStorageReconciliationJobBodyDto = z
  .strictObject({
    /** Record findings only; the stored usage summary is left as it is. */
    dryRun: z.boolean().optional(),
  })
  .meta({ id: 'CreateStorageReconciliationJobBodyDto' })

const JobStatus = z.enum(['queued', 'running', 'succeeded', 'failed'])

export const StorageReconciliationJobSummaryDto = z
  .object({
    id: z.uuid(),
    status: JobStatus,
    dryRun: z.boolean(),
    objectsScanned: z.number().int(),
    orphanCount: z.number().int(),
    missingCount: z.number().int(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'StorageReconciliationJobSummaryDto' })

export const StorageReconciliationFindingDto = z
  .object({
    kind: z.enum(['orphan', 'missing']),
    bucket: z.string(),
    key: z.string(),
    size: z.number().int().nullable(),
  })
  .meta({ id: 'StorageReconciliationFindingDto' })

export const StorageReconciliationJobDetailsDto = StorageReconciliationJobSummaryDto.extend({
  bytesScanned: z.number().int(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  updatedAt: z.iso.datetime(),
  workflowId: z.string(),
  findings: z.array(StorageReconciliationFindingDto),
  /** true when there are more findings than `findings` holds. */
  findingsTruncated: z.boolean(),
}).meta({ id: 'StorageReconciliationJobDetailsDto' })

export const CreateStorageReconciliationJobResponseDto = z
  .object({
    job: StorageReconciliationJobSummaryDto,
    created: z.boolean(),
  })
  .meta({ id: 'CreateStorageReconciliationJobResponseDto' })

export const ListJobsQuery = PageQuery.extend({ status: JobStatus.optional() })
export const JobParams = z.object({ jobId: z.string() })

export type StorageBucketSummary = z.infer<typeof StorageBucketSummaryDto>
export type JobSummary = z.infer<typeof StorageReconciliationJobSummaryDto>
