import { Elysia } from 'elysia'
import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { clearedSessionCookie } from '../http/session-cookie'
import { CurrentSessionDto, CurrentUserSessionDto, InvalidateOtherSessionsResponseDto, SessionInvalidateAllResponseDto } from './model'
import { describeCurrentSession, endSession, invalidateAllSessions, invalidateOtherSessions, listSessions, revokeOwnSession } from './service'

/** The caller's own sessions: list and end them. Starting one is api/sign-in/. */
export const sessionsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Sessions'] })
    .use(http)
    .get(
      '/sessions/current',
      ({ request, ctx, set }) => {
        set.headers['cache-control'] = 'no-store'
        return ok(request, describeCurrentSession(deps, ctx))
      },
      {
        auth: 'session',
        errors: ['A400s'],
        response: { 200: envelope(CurrentSessionDto) },
        detail: { summary: 'This session and its CSRF token (a page signed in by the single sign-on redirect, which sets only the cookie, reads it here)' },
      },
    )
    .delete(
      '/sessions/current',
      async ({ ctx, set }) => {
        await endSession(deps, ctx)
        set.status = 204
        set.headers['set-cookie'] = clearedSessionCookie(deps.config)
      },
      {
        auth: 'user',
        errors: ['A400s', 'A409s'],
        detail: { summary: 'Sign out of this session', responses: { 204: { description: 'Signed out; the session cookie is cleared' } } },
      },
    )
    .delete(
      '/sessions/:sessionId',
      async ({ ctx, params, set }) => {
        await revokeOwnSession(deps, ctx, params.sessionId)
        set.status = 204
      },
      {
        auth: 'tenant:read',
        idempotent: 'user',
        errors: ['A400s', 'A404', 'A409s'],
        params: z.object({ sessionId: z.string() }),
        detail: { summary: 'Sign out one other session of yours', responses: { 204: { description: 'That session is ended' } } },
      },
    )
    .post(
      '/sessions/bulk-invalidation-requests',
      async ({ request, principal, ctx, set }) => {
        const result = await invalidateAllSessions(deps, ctx)
        set.status = 201
        if (principal.credential === 'session') set.headers['set-cookie'] = clearedSessionCookie(deps.config)
        return ok(request, result)
      },
      {
        auth: 'tenant:read',
        idempotent: 'user',
        errors: ['A400s', 'A409s'],
        response: { 201: envelope(SessionInvalidateAllResponseDto) },
        detail: { summary: 'Sign out every session of yours, this one included' },
      },
    )
    .get('/users/me/sessions', async ({ request, ctx, query }) => page(request, await listSessions(deps, ctx, query)), {
      auth: 'tenant:read',
      errors: ['A400p'],
      query: PageQuery,
      response: { 200: listEnvelope(CurrentUserSessionDto) },
      detail: { summary: "The signed-in user's live sessions, newest first", tags: ['Accounts'] },
    })
    .post('/users/me/other-session-invalidation-requests', async ({ request, ctx }) => ok(request, await invalidateOtherSessions(deps, ctx)), {
      auth: 'tenant:read',
      idempotent: 'user',
      errors: ['A400', 'A409'],
      response: { 200: envelope(InvalidateOtherSessionsResponseDto) },
      detail: { summary: 'Sign out every other session of yours (all of them when called with a PAT)', tags: ['Accounts'] },
    })
