import { Elysia } from 'elysia'
import type { AppDeps } from '../http/deps'
import { envelope, ok } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { CreateApiKeyBodyDto, CreateApiKeyResponseDto, TokenSelfDto } from './model'
import { createApiKey, describeCredential } from './service'

export const apiKeysRoutes = (deps: AppDeps) =>
  new Elysia({ tags: ['API keys'] })
    .use(httpConventions(deps))
    .post('/api-keys', async ({ request, principal, body, set }) => {
      set.status = 201
      return ok(request, await createApiKey(deps.sql, principal, body))
    }, {
      auth: 'apikey:write', errors: ['A400', 'A409'], body: CreateApiKeyBodyDto,
      response: { 201: envelope(CreateApiKeyResponseDto) },
      detail: { summary: 'Create a personal access token; the token is in this response only' },
    })
    .get('/tokens/self', ({ request, principal }) => ok(request, describeCredential(principal)), {
      auth: 'user', errors: ['A400'], response: { 200: envelope(TokenSelfDto) },
      detail: { summary: 'Describe the presenting credential' },
    })
