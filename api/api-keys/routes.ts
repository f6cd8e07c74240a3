import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { ApiKeySummaryDto, CreateApiKeyBodyDto, CreateApiKeyResponseDto, ListApiKeysQuery, TokenSelfDto } from './model'
import { standingIn } from '../project-members/service'
import { createApiKey, describeCredential, listKeys, revokeKey } from './service'

export const apiKeysRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['API keys'] })
    .use(http)
    .post(
      '/api-keys',
      async ({ request, ctx, body, set }) => {
        // A project token's ceiling is what the caller holds in that project (api/project-members decides it).
        const standing = body.projectId === undefined ? undefined : await standingIn(deps.sql, ctx, body.projectId)
        const project = standing && { projectId: standing.project.id, held: standing.held }
        const created = await createApiKey(deps, ctx, body, project)
        set.status = 201
        return ok(request, created)
      },
      {
        auth: 'apikey:write',
        errors: ['A400', 'A409'],
        body: CreateApiKeyBodyDto,
        response: { 201: envelope(CreateApiKeyResponseDto) },
        detail: {
          ...links({ apiKeyId: '$response.body#/data/apiKey/id' }, ['DELETE /v1/api-keys/{apiKeyId}']),
          summary: 'Create a personal access token; the token is in this response only',
        },
      },
    )
    .get('/api-keys', async ({ request, ctx, query }) => page(request, await listKeys(deps, ctx, query)), {
      auth: ['apikey:read', 'apikey:manage'],
      errors: ['A400p'],
      query: ListApiKeysQuery,
      response: { 200: listEnvelope(ApiKeySummaryDto) },
      detail: { summary: "Personal access tokens of this tenant, newest first: yours (scope=self) or everyone's (scope=tenant, apikey:manage)" },
    })
    .delete(
      '/api-keys/:apiKeyId',
      async ({ request, ctx, params }) => {
        const summary = await revokeKey(deps, ctx, params.apiKeyId)
        await deps.pats.fence()
        return ok(request, summary)
      },
      {
        auth: 'apikey:write',
        errors: ['A400', 'A404', 'A409'],
        response: { 200: envelope(ApiKeySummaryDto) },
        detail: { summary: "Revoke a token (yours, or anyone's with apikey:manage); answers its summary" },
      },
    )
    .get('/tokens/self', ({ request, ctx }) => ok(request, describeCredential(ctx)), {
      auth: 'user',
      errors: ['A400'],
      response: { 200: envelope(TokenSelfDto) },
      detail: { summary: 'Describe the presenting credential' },
    })
