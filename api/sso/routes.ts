import { Elysia } from 'elysia'
import { z } from 'zod'
import type { AppDeps } from '../http/deps'
import { envelope, ifMatchVersion, listEnvelope, okVersioned, page } from '../http/envelope'
import { readCookie } from '../http/auth'
import { httpConventions } from '../http/plugin'
import { stateOf } from '../http/request-state'
import { secure, sessionCookie } from '../http/session-cookie'
import { CreateTenantSsoConnectionRequestDto, ListSsoConnectionsQuery, TenantSsoConnectionDto, UpdateTenantSsoConnectionRequestDto } from './model'
import { createConnection, getConnection, listConnections, toSsoConnectionDto, updateConnection } from './service'
import { finishSsoSignIn, safeReturnTo, SSO_STATE_COOKIE, startSsoSignIn } from './signin'

const CALLBACK_PATH = '/v1/auth/sso/callback'
const AFTER_SIGN_IN = '/account'

export const ssoRoutes = (deps: AppDeps) => {
  const dto = toSsoConnectionDto(deps.config)
  const env = { sql: deps.sql, config: deps.config, secretsKey: deps.keys.secrets }
  // The redirect URI registered at the provider: PUBLIC_URL when set, else the address this request reached.
  const callbackUrl = (request: Request) => `${(deps.config.PUBLIC_URL ?? new URL(request.url).origin).replace(/\/$/, '')}${CALLBACK_PATH}`
  const stateCookie = (value: string, maxAge: number) =>
    `${SSO_STATE_COOKIE}=${value}; Path=/v1/auth/sso; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure(deps.config) ? '; Secure' : ''}`
  return new Elysia({ tags: ['Single sign-on'] })
    .use(httpConventions(deps))
    .get('/tenants/current/sso-connections', async ({ request, principal, query }) => {
      const { items, size, nextPageToken } = await listConnections(deps.sql, deps.keys.page, principal, query)
      return page(request, items.map(dto), size, nextPageToken)
    }, {
      auth: 'tenant:manage', errors: ['T400p'], query: ListSsoConnectionsQuery, response: { 200: listEnvelope(TenantSsoConnectionDto) },
      detail: { summary: 'OIDC connections of the current tenant, newest first (client secrets are never returned)' },
    })
    .post('/tenants/current/sso-connections', async ({ request, principal, body, set }) => {
      const row = await createConnection(deps.sql, deps.keys.secrets, principal, body)
      set.status = 201
      return okVersioned(request, set, row.version, dto(row))
    }, {
      auth: 'tenant:manage', idempotent: true, errors: ['T400', 'T409'], body: CreateTenantSsoConnectionRequestDto,
      response: { 201: envelope(TenantSsoConnectionDto) },
      detail: { summary: 'Add an OIDC connection; the client secret is stored encrypted and is write-only' },
    })
    .get('/tenants/current/sso-connections/:connectionId', async ({ request, principal, params, set }) => {
      const row = await getConnection(deps.sql, principal, params.connectionId)
      return okVersioned(request, set, row.version, dto(row))
    }, {
      auth: 'tenant:manage', errors: ['T400', 'T404'], response: { 200: envelope(TenantSsoConnectionDto) },
      detail: { summary: 'One OIDC connection, with its ETag for If-Match' },
    })
    .patch('/tenants/current/sso-connections/:connectionId', async ({ request, principal, params, body, set }) => {
      const version = ifMatchVersion(request)
      const row = await updateConnection(deps.sql, deps.keys.secrets, principal, params.connectionId, version, body)
      return okVersioned(request, set, row.version, dto(row))
    }, {
      auth: 'tenant:manage', errors: ['T400', 'T404', 'T409', 'P412'], body: UpdateTenantSsoConnectionRequestDto,
      response: { 200: envelope(TenantSsoConnectionDto) },
      detail: { summary: 'Change an OIDC connection (If-Match optional); a new clientSecret replaces the stored one' },
    })
    .get('/auth/sso/:connectionId/start', async ({ request, principal, params, query }) => {
      // Started from a signed-in session, the provider's identity is linked to that account.
      const linkUserId = principal?.userId ?? null
      const start = await startSsoSignIn(env, params.connectionId, { redirectUri: callbackUrl(request), returnTo: safeReturnTo(query.returnTo), linkUserId })
      const headers = new Headers({ location: start.location, 'cache-control': 'no-store' })
      headers.append('set-cookie', stateCookie(start.state, start.stateTtlSeconds))
      return new Response(null, { status: 302, headers })
    }, {
      optionalAuth: { requirement: 'user', onFailure: 'anonymous' }, errors: ['A400s'], query: z.object({ returnTo: z.string().max(2048).optional().describe('A path on this site to land on afterwards') }),
      detail: { summary: 'Start OIDC sign-in: redirects the browser to the identity provider (state, nonce and PKCE S256)' },
    })
    .get('/auth/sso/callback', async ({ request }) => {
      const url = new URL(`${callbackUrl(request)}${new URL(request.url).search}`)
      const ctx = { userAgent: request.headers.get('user-agent'), ip: stateOf(request).ip }
      const { session, returnTo } = await finishSsoSignIn(env, url, readCookie(request.headers.get('cookie'), SSO_STATE_COOKIE), ctx)
      const headers = new Headers({ location: returnTo ?? AFTER_SIGN_IN, 'cache-control': 'no-store' })
      headers.append('set-cookie', sessionCookie(deps.config, session.token, session.expiresAt))
      headers.append('set-cookie', stateCookie('', 0))
      return new Response(null, { status: 303, headers })
    }, {
      public: true, errors: ['A400s'],
      detail: { summary: 'Where the identity provider returns: exchanges the code, signs in (just-in-time membership) and redirects' },
    })
}
