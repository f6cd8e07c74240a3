import { Elysia } from 'elysia'
import { etagOf, expectedVersion, parseIfMatch } from '../platform/etag'
import { closePage, openPage, PageQuery } from '../platform/pagination'
import type { AppDeps } from '../http/deps'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { stateOf } from '../http/request-state'
import { sessionCookie } from '../http/session-cookie'
import { sessionEnvelope } from '../sessions/respond'
import { CurrentUserSessionDto, AuthSessionEnvelopeSwaggerDto } from '../sessions/model'
import { listSessions } from '../sessions/service'
import { AuthMeResponseDto, SelfRegistrationBody, UpdateCurrentUserBodyDto, UpdateCurrentUserResponseDto } from './model'
import { describeMe, registerUser, toUserDto, updateMe } from './service'

export const usersRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: '/users', tags: ['Accounts'] })
    .use(httpConventions(deps))
    .post('', async ({ body, request, set }) => {
      const st = stateOf(request)
      const { user, session } = await registerUser(deps.sql, deps.config, body, { userAgent: request.headers.get('user-agent'), ip: st.ip })
      set.status = 201
      set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
      return ok(request, await sessionEnvelope(deps, user.id, null, session))
    }, {
      public: true, idempotent: true, errors: ['A400', 'A409'],
      body: SelfRegistrationBody, response: { 201: AuthSessionEnvelopeSwaggerDto },
      detail: { summary: 'Register an account (self-registration) and start a session' },
    })
    .get('/me', async ({ request, principal, set }) => {
      const { me, version } = await describeMe(deps.sql, principal.userId, principal.membership?.id ?? null)
      set.headers.etag = etagOf(version)
      return ok(request, me)
    }, {
      auth: 'user', errors: ['A400'], response: { 200: envelope(AuthMeResponseDto) },
      detail: { summary: 'The signed-in user, their memberships and the current one' },
    })
    .patch('/me', async ({ request, principal, body, set }) => {
      const ifMatch = parseIfMatch(request.headers.get('if-match'))
      const row = await updateMe(deps.sql, principal.userId, expectedVersion(ifMatch), body.displayName)
      set.headers.etag = etagOf(row.version)
      return ok(request, toUserDto(row))
    }, {
      auth: 'tenant:read', errors: ['A400', 'A409', 'P412'], body: UpdateCurrentUserBodyDto,
      response: { 200: envelope(UpdateCurrentUserResponseDto) },
      detail: { summary: 'Update the signed-in user (If-Match optional)' },
    })
    .get('/me/sessions', async ({ request, principal, query }) => {
      type Cursor = { createdAt: string; id: string }
      const binding = { route: 'GET /users/me/sessions', scope: `user:${principal.userId}`, filters: {} }
      const req = openPage<Cursor>(deps.keys.page, binding, query.pageSize, query.pageToken)
      const current = principal.credential === 'session' ? principal.credentialId : null
      const rows = await listSessions(deps.sql, principal.userId, current, req.after, req.size)
      const { items, nextPageToken } = closePage(deps.keys.page, binding, rows, req.size, (r) => r.cursor)
      return page(request, items.map(({ cursor: _, ...dto }) => dto), req.size, nextPageToken)
    }, {
      auth: 'tenant:read', errors: ['A400p'], query: PageQuery, response: { 200: listEnvelope(CurrentUserSessionDto) },
      detail: { summary: "The signed-in user's live sessions, newest first" },
    })
