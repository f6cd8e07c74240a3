import { Elysia } from 'elysia'
import type { AppDeps } from '../http/deps'
import { ok } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { stateOf } from '../http/request-state'
import { clearedSessionCookie, sessionCookie } from '../http/session-cookie'
import { AuthSessionEnvelopeSwaggerDto, CreateSessionBodyDto } from './model'
import { sessionEnvelope } from './respond'
import { endSession, signIn } from './service'

export const sessionsRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: '/sessions', tags: ['Sessions'] })
    .use(httpConventions(deps))
    .post('', async ({ body, request, set }) => {
      const ctx = { userAgent: request.headers.get('user-agent'), ip: stateOf(request).ip }
      const { user, membershipId, session } = await signIn(deps.sql, deps.config, body, ctx)
      set.status = 201
      set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
      return ok(request, await sessionEnvelope(deps, user.id, membershipId, session))
    }, {
      public: true, errors: ['A400s', 'A409s'], body: CreateSessionBodyDto, response: { 201: AuthSessionEnvelopeSwaggerDto },
      detail: { summary: 'Sign in with email and password' },
    })
    .delete('/current', async ({ principal, set }) => {
      if (principal.credential === 'session') await endSession(deps.sql, principal.credentialId, principal.userId)
      set.status = 204
      set.headers['set-cookie'] = clearedSessionCookie(deps.config)
    }, {
      auth: 'user', errors: ['A400s', 'A409s'],
      detail: { summary: 'Sign out of this session' },
    })
