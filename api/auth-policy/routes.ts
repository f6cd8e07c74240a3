import { Elysia } from 'elysia'
import { etagOf, expectedVersion, parseIfMatch } from '../platform/etag'
import type { AppDeps } from '../http/deps'
import { envelope, ok } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { TenantAuthPolicyDto, UpdateTenantAuthPolicyRequestDto } from './model'
import { getAuthPolicy, patchAuthPolicy } from './service'

export const authPolicyRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: '/tenants/current/auth-policy', tags: ['Tenant administration'] })
    .use(httpConventions(deps))
    .get('', async ({ request, principal, set }) => {
      const { policy, version } = await getAuthPolicy(deps.sql, principal.membership!.tenantId, deps.config)
      set.headers.etag = etagOf(version)
      return ok(request, policy)
    }, {
      auth: 'tenant:manage', errors: ['T400'], response: { 200: envelope(TenantAuthPolicyDto) },
      detail: { summary: "The current tenant's authentication policy (defaults until first changed)" },
    })
    .patch('', async ({ request, principal, body, set }) => {
      const ifMatch = parseIfMatch(request.headers.get('if-match'))
      const { policy, version } = await patchAuthPolicy(deps.sql, deps.config, principal.membership!.tenantId, expectedVersion(ifMatch), body)
      set.headers.etag = etagOf(version)
      return ok(request, policy)
    }, {
      auth: 'tenant:manage', errors: ['T400', 'T409', 'P412'], body: UpdateTenantAuthPolicyRequestDto,
      response: { 200: envelope(TenantAuthPolicyDto) },
      detail: { summary: "Change the current tenant's authentication policy (If-Match optional)" },
    })
