import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, listEnvelope, ok, okVersioned, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { PageQuery } from '../platform/pagination'
import {
  CreateTenantSsoConnectionRequestDto,
  ListSsoConnectionsQuery,
  SsoIdentityDto,
  TenantSsoConnectionDto,
  UpdateTenantSsoConnectionRequestDto,
} from './model'
import {
  createConnection,
  getConnection,
  listConnections,
  listMyIdentities,
  toSsoConnectionDto,
  toSsoIdentityDto,
  unlinkMyIdentity,
  updateConnection,
} from './service'

export const ssoRoutes = (deps: AppDeps, http: HttpConventions) => {
  const dto = toSsoConnectionDto(deps.config)
  return (
    new Elysia({ tags: ['Single sign-on'] })
      .use(http)
      .get('/tenants/current/sso-connections', async ({ request, ctx, query }) => page(request, await listConnections(deps, ctx, query)), {
        auth: 'tenant:manage',
        errors: ['T400p'],
        query: ListSsoConnectionsQuery,
        response: { 200: listEnvelope(TenantSsoConnectionDto) },
        detail: { summary: 'OIDC connections of the current tenant, newest first (client secrets are never returned)' },
      })
      .post(
        '/tenants/current/sso-connections',
        async ({ request, ctx, body, set }) => {
          const row = await createConnection(deps, ctx, body)
          set.status = 201
          return okVersioned(request, set, row.version, dto(row))
        },
        {
          auth: 'tenant:manage',
          idempotent: true,
          errors: ['T400', 'T409'],
          body: CreateTenantSsoConnectionRequestDto,
          response: { 201: envelope(TenantSsoConnectionDto) },
          detail: {
            ...links({ connectionId: '$response.body#/data/id' }, [
              'GET /v1/tenants/current/sso-connections/{connectionId}',
              'PATCH /v1/tenants/current/sso-connections/{connectionId}',
            ]),
            summary: 'Add an OIDC connection; the client secret is stored encrypted and is write-only',
          },
        },
      )
      .get(
        '/tenants/current/sso-connections/:connectionId',
        async ({ request, ctx, params, set }) => {
          const row = await getConnection(deps, ctx, params.connectionId)
          return okVersioned(request, set, row.version, dto(row))
        },
        {
          auth: 'tenant:manage',
          errors: ['T400', 'T404'],
          response: { 200: envelope(TenantSsoConnectionDto) },
          detail: { summary: 'One OIDC connection, with its ETag for If-Match' },
        },
      )
      .patch(
        '/tenants/current/sso-connections/:connectionId',
        async ({ request, ctx, params, body, set }) => {
          const row = await updateConnection(deps, ctx, params.connectionId, ifMatchVersion(request), body)
          return okVersioned(request, set, row.version, dto(row))
        },
        {
          auth: 'tenant:manage',
          errors: ['T400', 'T404', 'T409', 'P412'],
          body: UpdateTenantSsoConnectionRequestDto,
          response: { 200: envelope(TenantSsoConnectionDto) },
          detail: { summary: 'Change an OIDC connection (If-Match optional); a new clientSecret replaces the stored one' },
        },
      )
      // Linking starts at POST /users/me/sso-identities/link-requests (api/sign-in/routes.ts).
      .get('/users/me/sso-identities', async ({ request, ctx, query }) => page(request, await listMyIdentities(deps, ctx, query)), {
        auth: 'session',
        errors: ['A400p'],
        query: PageQuery,
        response: { 200: listEnvelope(SsoIdentityDto) },
        detail: { summary: 'Single sign-on identities linked to your account, newest first' },
      })
      .delete(
        '/users/me/sso-identities/:identityId',
        async ({ request, ctx, params }) => ok(request, toSsoIdentityDto(await unlinkMyIdentity(deps, ctx, params.identityId))),
        {
          auth: 'session',
          errors: ['A400', 'A404', 'A409'],
          response: { 200: envelope(SsoIdentityDto) },
          detail: { summary: "Unlink an identity: that provider's sign-in no longer reaches your account through it" },
        },
      )
  )
}
