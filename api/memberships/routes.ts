import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, ok, okVersioned, page } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { RevokeMembershipApiKeysResponseDto } from '../api-keys/model'
import { CurrentTenantMembershipDto, ListMembershipsQuery, MembershipListEnvelope, RemovalResultDto, UpdateCurrentTenantMembershipBodyDto } from './model'
import { getMembership, listMemberships, removeMembership, revokeMemberKeys, toMembershipDto, updateMembership } from './service'

export const membershipsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Tenant administration'] })
    .use(http)
    .get(
      '/tenants/current/memberships',
      async ({ request, ctx, query }) => {
        const { totalCount, ...p } = await listMemberships(deps, ctx, query)
        const body = page(request, p)
        return { ...body, meta: { ...body.meta, totalCount } }
      },
      {
        auth: 'tenant:manage',
        errors: ['T400p'],
        query: ListMembershipsQuery,
        response: { 200: MembershipListEnvelope },
        detail: { summary: 'Memberships of the current tenant: filter, search, sort, keyset pages and the total count' },
      },
    )
    .get(
      '/tenants/current/memberships/:membershipId',
      async ({ request, ctx, params, set }) => {
        const row = await getMembership(deps, ctx, params.membershipId)
        return okVersioned(request, set, row.version, toMembershipDto(row))
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404'],
        response: { 200: envelope(CurrentTenantMembershipDto) },
        detail: { summary: 'One membership of the current tenant, with its ETag for If-Match' },
      },
    )
    .patch(
      '/tenants/current/memberships/:membershipId',
      async ({ request, ctx, params, body, set }) => {
        const row = await updateMembership(deps, ctx, params.membershipId, ifMatchVersion(request), body)
        await deps.pats.fence() // a role, status or expiry change can narrow the member's tokens
        return okVersioned(request, set, row.version, toMembershipDto(row))
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404', 'T409', 'P412'],
        body: UpdateCurrentTenantMembershipBodyDto,
        response: { 200: envelope(CurrentTenantMembershipDto) },
        detail: { summary: "Change a member's role, status or expiry (If-Match optional); the last active owner is protected" },
      },
    )
    .delete(
      '/tenants/current/memberships/:membershipId',
      async ({ request, ctx, params }) => {
        const version = ifMatchVersion(request)
        const removed = await removeMembership(deps, ctx, params.membershipId, version)
        await deps.pats.fence()
        return ok(request, removed)
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404', 'T409', 'P412'],
        response: { 200: envelope(RemovalResultDto) },
        detail: { summary: 'Remove a member: their sessions leave the tenant and their tokens for it are revoked, at once' },
      },
    )
    .post(
      '/api-keys/memberships/:membershipId/revocations',
      async ({ request, ctx, params, set }) => {
        const result = await revokeMemberKeys(deps, ctx, params.membershipId)
        await deps.pats.fence()
        set.status = 201
        return ok(request, result)
      },
      {
        auth: 'apikey:manage',
        idempotent: true,
        errors: ['A400', 'A404', 'A409'],
        response: { 201: envelope(RevokeMembershipApiKeysResponseDto) },
        detail: { summary: 'Revoke every live token of one member of this tenant', tags: ['API keys'] },
      },
    )
