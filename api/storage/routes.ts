import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import {
  CreateStorageReconciliationJobBodyDto,
  CreateStorageReconciliationJobResponseDto,
  JobParams,
  ListJobsQuery,
  ProvisionStorageBucketBodyDto,
  StorageBucketSetDto,
  StorageReconciliationJobDetailsDto,
  StorageReconciliationJobSummaryDto,
  StorageRegionsResponseDto,
  StorageSummaryQuery,
  TenantStorageSummaryDto,
} from './model'
import { createReconciliationJob, describeReconciliationJob, listReconciliationJobs } from './reconciliation'
import { regionsFromConfig } from './regions'
import { getBucketSet, provisionBuckets, storageSummary } from './service'

// The interface lists T400 for the tenant storage routes, but the storage conditions themselves
// (STORAGE_NOT_READY, STORAGE_REGION_NOT_AVAILABLE, ...) are only in S400, so routes that raise them declare both.
export const storageRoutes = (deps: AppDeps, http: HttpConventions) => {
  // Endpoints and keys never leave the server: clients see ids, names and availability.
  const regions = regionsFromConfig(deps.config).map(({ id, name, available }) => ({ id, name, available }))
  return new Elysia({ tags: ['Storage'] })
    .use(http)
    .get('/storage-regions', ({ request }) => ok(request, { regions, defaultRegionId: regions[0]!.id }), {
      public: true,
      errors: ['S400'],
      response: { 200: envelope(StorageRegionsResponseDto) },
      detail: { summary: 'Storage regions a tenant can provision into' },
    })
    .get('/tenants/current/storage-bucket', async ({ request, ctx }) => ok(request, await getBucketSet(deps, ctx)), {
      auth: 'tenant:read',
      errors: ['T400'],
      response: { 200: envelope(StorageBucketSetDto) },
      detail: { summary: "The tenant's general, dataset and export buckets with their provisioning status" },
    })
    .put('/tenants/current/storage-bucket', async ({ request, ctx, body }) => ok(request, await provisionBuckets(deps, ctx, body.regionId)), {
      auth: 'tenant:manage',
      errors: ['T400', 'S400', 'T409'],
      body: ProvisionStorageBucketBodyDto,
      response: { 200: envelope(StorageBucketSetDto) },
      detail: { summary: 'Provision the tenant buckets in a region (asynchronous; repeat or GET to follow progress)' },
    })
    .get('/tenants/current/storage-summary', async ({ request, ctx, query }) => ok(request, await storageSummary(deps, ctx, query.refresh === 'true')), {
      auth: 'tenant:read',
      errors: ['T400', 'S400'],
      query: StorageSummaryQuery,
      response: { 200: envelope(TenantStorageSummaryDto) },
      detail: { summary: 'Object count and bytes per bucket; refresh=true recomputes from storage' },
    })
    .post(
      '/tenants/current/storage-reconciliation-jobs',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await createReconciliationJob(deps, ctx, body.dryRun ?? false))
      },
      {
        auth: 'billing:write',
        idempotent: true,
        errors: ['T400', 'S400', 'T409'],
        body: CreateStorageReconciliationJobBodyDto,
        response: { 201: envelope(CreateStorageReconciliationJobResponseDto) },
        detail: {
          ...links({ jobId: '$response.body#/data/job/id' }, ['GET /v1/tenants/current/storage-reconciliation-jobs/{jobId}']),
          summary: 'Start reconciling storage with the platform records, or return the job already queued or running',
        },
      },
    )
    .get('/tenants/current/storage-reconciliation-jobs', async ({ request, ctx, query }) => page(request, await listReconciliationJobs(deps, ctx, query)), {
      auth: 'billing:read',
      errors: ['T400p'],
      query: ListJobsQuery,
      response: { 200: listEnvelope(StorageReconciliationJobSummaryDto) },
      detail: { summary: 'Reconciliation jobs of the tenant, newest first' },
    })
    .get(
      '/tenants/current/storage-reconciliation-jobs/:jobId',
      async ({ request, ctx, params }) => ok(request, await describeReconciliationJob(deps, ctx, params.jobId)),
      {
        auth: 'billing:read',
        errors: ['T400', 'T404'],
        params: JobParams,
        response: { 200: envelope(StorageReconciliationJobDetailsDto) },
        detail: { summary: 'A reconciliation job with its progress and findings' },
      },
    )
}
