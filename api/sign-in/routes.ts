import { Elysia } from 'elysia'
import { z } from 'zod'
import type { AppDeps } from '../compose'
import { readCookie } from '../http/auth'
import { envelope, ok } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { secure, sessionCookie } from '../http/session-cookie'
import { MfaChallengeConfirmRequestDto, PasskeySignInOptionsDto } from '../mfa/model'
import { passkeySignInOptions } from '../mfa/service'
import { AuthMeResponseDto } from '../users/model'
import { describeMe } from '../users/service'
import { AuthSessionEnvelopeSwaggerDto, CreateSessionBodyDto, SwitchCurrentMembershipBodyDto } from './model'
import { sessionEnvelope } from './respond'
import { confirmChallenge, signInWithPasskey, signInWithPassword, switchCurrentMembership } from './service'
import { SsoLinkRequestBodyDto, SsoLinkRequestDto } from '../sso/model'
import { finishSsoSignIn, safeReturnTo, SSO_STATE_COOKIE, startSsoLink, startSsoSignIn } from './sso'

const CALLBACK_PATH = '/v1/auth/sso/callback'
// The console's My account (api/console/ui/account.tsx): where a sign-in without a returnTo lands.
const AFTER_SIGN_IN = '/console#/account'
const SSO_TAGS = ['Single sign-on']

/** Every flow that opens a session or moves it: password, passkey, the second-factor challenge, the SSO round
 *  trip, and switching the session's membership. */
export const signInRoutes = (deps: AppDeps, http: HttpConventions) => {
  // The redirect URI registered at the provider: PUBLIC_URL when set, else the address this request reached.
  const callbackUrl = (request: Request) => `${(deps.config.PUBLIC_URL ?? new URL(request.url).origin).replace(/\/$/, '')}${CALLBACK_PATH}`
  const stateCookie = (value: string, maxAge: number) =>
    `${SSO_STATE_COOKIE}=${value}; Path=/v1/auth/sso; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure(deps.config) ? '; Secure' : ''}`
  return new Elysia({ tags: ['Sessions'] })
    .use(http)
    .post(
      '/sessions',
      async ({ body, request, ctx, set }) => {
        const { who, membershipId, session } =
          'assertion' in body ? await signInWithPasskey(deps, ctx, body.assertion) : await signInWithPassword(deps, ctx, body)
        set.status = 201
        set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
        return ok(request, await sessionEnvelope(deps, who.user.id, membershipId, session, who))
      },
      {
        public: true,
        errors: ['A400s', 'A409s', 'U401'],
        body: CreateSessionBodyDto,
        response: { 201: AuthSessionEnvelopeSwaggerDto },
        detail: {
          ...links({ sessionId: '$response.body#/data/session/id' }, ['DELETE /v1/sessions/{sessionId}']),
          summary: 'Sign in with email and password, or with a passkey assertion (see POST /sessions/passkey-challenges)',
        },
      },
    )
    .post(
      '/sessions/mfa-challenges/confirmations',
      async ({ request, ctx, body, set }) => {
        const { userId, membershipId } = await confirmChallenge(deps, ctx, body)
        set.status = 201
        return ok(request, (await describeMe(deps, userId, membershipId)).me)
      },
      {
        public: true,
        idempotent: true,
        errors: ['A400s', 'A409s', 'U401'],
        body: MfaChallengeConfirmRequestDto,
        response: { 201: envelope(AuthMeResponseDto) },
        detail: {
          summary: 'Answer the second-factor challenge of a new session with a TOTP code, a recovery code or a passkey',
          tags: ['Multi-factor and passkeys'],
        },
      },
    )
    .post(
      '/sessions/passkey-challenges',
      async ({ request, set }) => {
        set.status = 201
        return ok(request, await passkeySignInOptions(deps))
      },
      {
        public: true,
        errors: ['A400s', 'A409s'],
        response: { 201: envelope(PasskeySignInOptionsDto) },
        detail: { summary: 'Options for a passwordless sign-in: pass the assertion to POST /sessions as {assertion}', tags: ['Multi-factor and passkeys'] },
      },
    )
    .post(
      '/sessions/current-membership-switches',
      async ({ request, principal, ctx, body, set }) => {
        const membershipId = await switchCurrentMembership(deps, ctx, body.membershipId)
        set.status = 201
        return ok(request, (await describeMe(deps, principal.userId, membershipId)).me)
      },
      {
        // 'user', not tenant:read: a session whose current membership was disabled must still be able to switch away.
        auth: 'user',
        idempotent: 'user',
        errors: ['A400s', 'A409s'],
        body: SwitchCurrentMembershipBodyDto,
        response: { 201: envelope(AuthMeResponseDto) },
        detail: { summary: "Switch this session to another of your memberships (that tenant's session lifetimes apply)" },
      },
    )
    .get(
      '/auth/sso/:connectionId/start',
      async ({ request, params, query }) => {
        // Never links, whatever cookie the browser carries: a foreign site can make a browser GET this (SameSite=Lax).
        const start = await startSsoSignIn(deps, params.connectionId, {
          redirectUri: callbackUrl(request),
          returnTo: safeReturnTo(query.returnTo),
          linkUserId: null,
        })
        const headers = new Headers({ location: start.location, 'cache-control': 'no-store' })
        headers.append('set-cookie', stateCookie(start.state, start.stateTtlSeconds))
        return new Response(null, { status: 302, headers })
      },
      {
        public: true,
        errors: ['A400s'],
        query: z.object({ returnTo: z.string().max(2048).optional().describe('A path on this site to land on afterwards') }),
        detail: {
          tags: SSO_TAGS,
          summary: 'Start OIDC sign-in: redirects the browser to the identity provider (state, nonce and PKCE S256)',
          responses: { 302: { description: 'To the identity provider; sets the state cookie', headers: { location: { schema: { type: 'string' } } } } },
        },
      },
    )
    .post(
      '/users/me/sso-identities/link-requests',
      async ({ request, ctx, body, set }) => {
        const start = await startSsoLink(deps, ctx, body, callbackUrl(request))
        set.status = 201
        set.headers['set-cookie'] = stateCookie(start.state, start.stateTtlSeconds)
        set.headers['cache-control'] = 'no-store'
        return ok(request, { authorizationUrl: start.location, expiresAt: new Date(Date.now() + start.stateTtlSeconds * 1000).toISOString() })
      },
      {
        auth: 'session',
        errors: ['A400', 'A409'],
        body: SsoLinkRequestBodyDto,
        response: { 201: envelope(SsoLinkRequestDto) },
        detail: {
          tags: SSO_TAGS,
          summary: 'Link a single sign-on identity to your account: needs a sign-in or second factor within 5 minutes; send the browser to authorizationUrl',
        },
      },
    )
    .get(
      '/auth/sso/callback',
      async ({ request, ctx }) => {
        const url = new URL(`${callbackUrl(request)}${new URL(request.url).search}`)
        const { session, returnTo } = await finishSsoSignIn(deps, ctx, url, readCookie(request.headers.get('cookie'), SSO_STATE_COOKIE))
        const headers = new Headers({ location: returnTo ?? AFTER_SIGN_IN, 'cache-control': 'no-store' })
        headers.append('set-cookie', sessionCookie(deps.config, session.token, session.expiresAt))
        headers.append('set-cookie', stateCookie('', 0))
        return new Response(null, { status: 303, headers })
      },
      {
        public: true,
        errors: ['A400s'],
        detail: {
          tags: SSO_TAGS,
          summary: 'Where the identity provider returns: exchanges the code, signs in (just-in-time membership) and redirects',
          responses: {
            303: { description: 'Signed in: to returnTo or the account page, with the session cookie', headers: { location: { schema: { type: 'string' } } } },
          },
        },
      },
    )
}
