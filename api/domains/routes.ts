import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { CreateTenantDomainRequestDto, ListTenantDomainsQuery, TenantDomainDto } from './model'
import { addDomain, listDomains, removeDomain, toTenantDomainDto, verifyDomain } from './service'

/** Email domains a tenant proves it controls (DNS TXT): only verified ones count for single sign-on. */
export const domainsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Single sign-on'] })
    .use(http)
    .get('/tenants/current/domains', async ({ request, ctx, query }) => page(request, await listDomains(deps, ctx, query)), {
      auth: 'tenant:manage',
      errors: ['T400p'],
      query: ListTenantDomainsQuery,
      response: { 200: listEnvelope(TenantDomainDto) },
      detail: { summary: 'Email domains claimed by the current tenant, newest first, with their verification state' },
    })
    .post(
      '/tenants/current/domains',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, toTenantDomainDto(await addDomain(deps, ctx, body.domain)))
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T409'],
        body: CreateTenantDomainRequestDto,
        response: { 201: envelope(TenantDomainDto) },
        detail: {
          ...links({ domainId: '$response.body#/data/id' }, [
            'POST /v1/tenants/current/domains/{domainId}/verifications',
            'DELETE /v1/tenants/current/domains/{domainId}',
          ]),
          summary: 'Claim an email domain: answers the TXT record to publish (adding it again answers the same claim)',
        },
      },
    )
    .post(
      '/tenants/current/domains/:domainId/verifications',
      async ({ request, ctx, params, set }) => {
        set.status = 201
        return ok(request, toTenantDomainDto(await verifyDomain(deps, ctx, params.domainId)))
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T404', 'T409'],
        response: { 201: envelope(TenantDomainDto) },
        detail: { summary: 'Look the TXT record up now: verified when it holds the value, else 400 saying what was found' },
      },
    )
    .delete(
      '/tenants/current/domains/:domainId',
      async ({ request, ctx, params }) => ok(request, toTenantDomainDto(await removeDomain(deps, ctx, params.domainId))),
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404'],
        response: { 200: envelope(TenantDomainDto) },
        detail: { summary: 'Remove a domain claim; single sign-on stops counting it at once' },
      },
    )
