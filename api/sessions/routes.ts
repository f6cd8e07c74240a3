import { Elysia } from 'elysia'
import { z } from 'zod'
import type { AppDeps } from '../http/deps'
import { envelope, ok } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { stateOf } from '../http/request-state'
import { clearedSessionCookie, sessionCookie } from '../http/session-cookie'
import { AuthSessionEnvelopeSwaggerDto, CreateSessionBodyDto, SessionInvalidateAllResponseDto, SwitchCurrentMembershipBodyDto } from './model'
import { signInWithPasskey } from '../mfa/service'
import { sessionEnvelope } from './respond'
import { describeMe } from '../users/service'
import { AuthMeResponseDto } from '../users/model'
import { endSession, invalidateAllSessions, revokeOwnSession, signIn, switchCurrentMembership } from './service'

export const sessionsRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: '/sessions', tags: ['Sessions'] })
    .use(httpConventions(deps))
    .post('', async ({ body, request, set }) => {
      const ctx = { userAgent: request.headers.get('user-agent'), ip: stateOf(request).ip }
      const { user, membershipId, session } = 'assertion' in body
        ? await signInWithPasskey(deps.sql, deps.config, body.assertion, ctx)
        : await signIn(deps.sql, deps.config, body, ctx, deps.signInThrottle)
      set.status = 201
      set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
      return ok(request, await sessionEnvelope(deps, user.id, membershipId, session))
    }, {
      public: true, errors: ['A400s', 'A409s'], body: CreateSessionBodyDto, response: { 201: AuthSessionEnvelopeSwaggerDto },
      detail: { summary: 'Sign in with email and password, or with a passkey assertion (see POST /sessions/passkey-challenges)' },
    })
    .delete('/current', async ({ principal, set }) => {
      if (principal.credential === 'session') await endSession(deps.sql, principal.credentialId, principal.userId)
      set.status = 204
      set.headers['set-cookie'] = clearedSessionCookie(deps.config)
    }, {
      auth: 'user', errors: ['A400s', 'A409s'],
      detail: { summary: 'Sign out of this session' },
    })
    .delete('/:sessionId', async ({ principal, params, set }) => {
      await revokeOwnSession(deps.sql, principal, params.sessionId)
      set.status = 204
    }, {
      auth: 'tenant:read', idempotent: true, errors: ['A400s', 'A404', 'A409s'], params: z.object({ sessionId: z.string() }),
      detail: { summary: 'Sign out one other session of yours' },
    })
    .post('/bulk-invalidation-requests', async ({ request, principal, set }) => {
      const result = await invalidateAllSessions(deps.sql, principal)
      set.status = 201
      if (principal.credential === 'session') set.headers['set-cookie'] = clearedSessionCookie(deps.config)
      return ok(request, result)
    }, {
      auth: 'tenant:read', idempotent: true, errors: ['A400s', 'A409s'], response: { 201: envelope(SessionInvalidateAllResponseDto) },
      detail: { summary: 'Sign out every session of yours, this one included' },
    })
    .post('/current-membership-switches', async ({ request, principal, body, set }) => {
      const membershipId = await switchCurrentMembership(deps.sql, deps.config, principal, body.membershipId)
      set.status = 201
      return ok(request, (await describeMe(deps.sql, principal.userId, membershipId)).me)
    }, {
      // 'user', not tenant:read: a session whose current membership was disabled must still be able to switch away.
      auth: 'user', idempotent: 'user', errors: ['A400s', 'A409s'], body: SwitchCurrentMembershipBodyDto,
      response: { 201: envelope(AuthMeResponseDto) },
      detail: { summary: "Switch this session to another of your memberships (that tenant's session lifetimes apply)" },
    })
