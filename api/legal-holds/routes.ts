import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { CreateLegalHoldBodyDto, LegalHoldDto, LegalHoldParams, ListLegalHoldsQuery } from './model'
import { getLegalHold, listTenantLegalHolds, placeLegalHold, releaseTenantLegalHold } from './service'

/** Additive (issue 37): legal holds, the owners' alone (legal_hold:manage), reading included: who is held is itself
 *  confidential. */
export const legalHoldsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/tenants/current/legal-holds', tags: ['Tenant administration'] })
    .use(http)
    .post(
      '',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await placeLegalHold(deps, ctx, body))
      },
      {
        auth: 'legal_hold:manage',
        idempotent: true,
        errors: ['T400', 'T404', 'T409'],
        body: CreateLegalHoldBodyDto,
        response: { 201: envelope(LegalHoldDto) },
        detail: {
          ...links({ holdId: '$response.body#/data/id' }, [
            'GET /v1/tenants/current/legal-holds/{holdId}',
            'POST /v1/tenants/current/legal-holds/{holdId}/release',
          ]),
          summary:
            'Place a legal hold on the whole tenant, one member or one project. LEGAL_HOLD_SCOPE_INVALID: not exactly one scope; SUBJECT_NOT_IN_TENANT: the user is not a member; LEGAL_HOLD_SCOPE_NOT_FOUND: no such project here',
        },
      },
    )
    .get('', async ({ request, ctx, query }) => page(request, await listTenantLegalHolds(deps, ctx, query)), {
      auth: 'legal_hold:manage',
      errors: ['T400p'],
      query: ListLegalHoldsQuery,
      response: { 200: listEnvelope(LegalHoldDto) },
      detail: { summary: 'Legal holds of this tenant, newest first, released ones too unless filtered' },
    })
    .get('/:holdId', async ({ request, ctx, params }) => ok(request, await getLegalHold(deps, ctx, params.holdId)), {
      auth: 'legal_hold:manage',
      errors: ['T400', 'T404'],
      params: LegalHoldParams,
      response: { 200: envelope(LegalHoldDto) },
      detail: { summary: 'One legal hold (LEGAL_HOLD_NOT_FOUND outside this tenant)' },
    })
    .post('/:holdId/release', async ({ request, ctx, params }) => ok(request, await releaseTenantLegalHold(deps, ctx, params.holdId)), {
      auth: 'legal_hold:manage',
      idempotent: true,
      errors: ['T400', 'T404', 'T409'],
      params: LegalHoldParams,
      response: { 200: envelope(LegalHoldDto) },
      detail: { summary: 'Release a legal hold; what it kept follows its retention again. LEGAL_HOLD_ALREADY_RELEASED (409) when released already' },
    })
