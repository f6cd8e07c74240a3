import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ok } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { CancelledOffboardingDto, OffboardingRequestDto } from './model'
import { cancelTenantOffboarding, getOffboarding, requestOffboarding } from './service'

/** Issue 37: a tenant's owners offboard it (export, then a retention window), read where it stands, or cancel it
 *  before the window ends. Each change fences the PAT caches before answering: the new-work gate reads the tenant's
 *  standing with the credential. */
export const offboardingRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/tenants/current/offboarding', tags: ['Tenant administration'] })
    .use(http)
    .post(
      '',
      async ({ request, ctx, set }) => {
        const view = await requestOffboarding(deps, ctx)
        await deps.pats.fence()
        set.status = 201
        return ok(request, view)
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'S400', 'T409'],
        response: { 201: envelope(OffboardingRequestDto) },
        detail: {
          summary:
            'Offboard the tenant (owners, from a session that signed in or answered a second factor in the last 5 minutes): new work stops, the export starts, the retention window runs',
        },
      },
    )
    .get('', async ({ request, ctx }) => ok(request, await getOffboarding(deps, ctx)), {
      auth: 'tenant:manage',
      errors: ['T400', 'T404'],
      response: { 200: envelope(OffboardingRequestDto) },
      detail: { summary: 'The open offboarding request (owners): state, window end, export and its links, blockers' },
    })
    .delete(
      '',
      async ({ request, ctx }) => {
        const cancelled = await cancelTenantOffboarding(deps, ctx)
        await deps.pats.fence()
        return ok(request, cancelled)
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404'],
        response: { 200: envelope(CancelledOffboardingDto) },
        detail: { summary: 'Cancel the offboarding before its window ends (owners): the tenant is active again, nothing lost' },
      },
    )
