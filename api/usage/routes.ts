import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ok } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { USAGE_SUMMARY_MAX_DAYS, UsageSummaryDto, UsageSummaryQuery } from './model'
import { usageSummary } from './service'

/** Additive (issue 38): what the tenant used, per meter, for the people who pay for it. */
export const usageRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Billing'] })
    .use(http)
    .get('/tenants/current/usage-summary', async ({ request, ctx, query }) => ok(request, await usageSummary(deps, ctx, query)), {
      auth: 'billing:read',
      errors: ['T400', 'T404'],
      query: UsageSummaryQuery,
      response: { 200: envelope(UsageSummaryDto) },
      detail: {
        summary: `Usage per meter in a window (from and to required, at most ${USAGE_SUMMARY_MAX_DAYS} days) for the tenant, one project or one meter, optionally by project and UTC day. USAGE_SUMMARY_SCOPE_INVALID: an unknown scope, or a filter the scope does not take; NOT_FOUND: a project outside this tenant`,
      },
    })
