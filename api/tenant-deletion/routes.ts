import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ok } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { StartTenantDeletionBodyDto, TenantDeletionJobDto, TenantDeletionJobParams } from './model'
import { getTenantDeletionJob, requestTenantDeletion, retryTenantDeletionJob } from './service'

/** Deletion jobs: the end of a tenant's offboarding (owners only; the service checks the role). */
export const tenantDeletionRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Tenant lifecycle'] })
    .use(http)
    .post(
      '/tenants/current/deletion-jobs',
      async ({ request, ctx, set }) => {
        set.status = 201
        return ok(request, await requestTenantDeletion(deps, ctx))
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T409'],
        body: StartTenantDeletionBodyDto,
        response: { 201: envelope(TenantDeletionJobDto) },
        detail: {
          ...links({ jobId: '$response.body#/data/id' }, [
            'GET /v1/tenants/current/deletion-jobs/{jobId}',
            'POST /v1/tenants/current/deletion-jobs/{jobId}/retry',
          ]),
          summary: 'Start deleting the tenant (owners): revokes every credential, empties its buckets, deletes its rows, signs a receipt',
        },
      },
    )
    .get('/tenants/current/deletion-jobs/:jobId', async ({ request, ctx, params }) => ok(request, await getTenantDeletionJob(deps, ctx, params.jobId)), {
      auth: 'tenant:manage',
      errors: ['T400', 'T404'],
      params: TenantDeletionJobParams,
      response: { 200: envelope(TenantDeletionJobDto) },
      detail: { summary: 'A deletion job with its progress and, once it succeeded, its signed receipt (owners)' },
    })
    .post(
      '/tenants/current/deletion-jobs/:jobId/retry',
      async ({ request, ctx, params, set }) => {
        set.status = 202
        return ok(request, await retryTenantDeletionJob(deps, ctx, params.jobId))
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404', 'T409'],
        params: TenantDeletionJobParams,
        response: { 202: envelope(TenantDeletionJobDto) },
        detail: { summary: 'Start a failed deletion job again where it stopped (owners)' },
      },
    )
