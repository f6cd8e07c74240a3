import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { TENANT_HEADER } from '../http/auth'
import { ok } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { CreateTenantBodyDto, CreateTenantResponseEnvelopeSwaggerDto } from './model'
import { createTenant } from './service'

export const tenantsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/tenants', tags: ['Tenant administration'] }).use(http).post(
    '',
    async ({ request, ctx, body, set }) => {
      const { tenant, membership } = await createTenant(deps, ctx, body, request.headers.get(TENANT_HEADER) ?? undefined)
      set.status = 201
      return ok(request, {
        tenant: { id: tenant.id, name: tenant.name, slug: tenant.slug, createdAt: tenant.created_at.toISOString() },
        membership: { id: membership.id, tenantId: membership.tenant_id, userId: membership.user_id, role: membership.role, status: membership.status },
      })
    },
    {
      // 'user' here: the first tenant needs no permission; the service demands tenant:manage after that.
      auth: 'user',
      idempotent: 'user',
      errors: ['T400', 'T409'],
      body: CreateTenantBodyDto,
      response: { 201: CreateTenantResponseEnvelopeSwaggerDto },
      detail: { summary: 'Create a tenant; the caller becomes its owner and the session switches to it', 'x-permissions': ['tenant:manage'] },
    },
  )
