import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, okVersioned } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { TenantAuthPolicyDto, UpdateTenantAuthPolicyRequestDto } from './model'
import { currentAuthPolicy, patchAuthPolicy } from './service'

export const authPolicyRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/tenants/current/auth-policy', tags: ['Tenant administration'] })
    .use(http)
    .get(
      '',
      async ({ request, ctx, set }) => {
        const { policy, version } = await currentAuthPolicy(deps, ctx)
        return okVersioned(request, set, version, policy)
      },
      {
        auth: 'tenant:manage',
        errors: ['T400'],
        response: { 200: envelope(TenantAuthPolicyDto) },
        detail: { summary: "The current tenant's authentication policy (defaults until first changed)" },
      },
    )
    .patch(
      '',
      async ({ request, ctx, body, set }) => {
        const { policy, version } = await patchAuthPolicy(deps, ctx, ifMatchVersion(request), body)
        return okVersioned(request, set, version, policy)
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T409', 'P412'],
        body: UpdateTenantAuthPolicyRequestDto,
        response: { 200: envelope(TenantAuthPolicyDto) },
        detail: { summary: "Change the current tenant's authentication policy (If-Match optional)" },
      },
    )
