import { Elysia } from 'elysia'
import { z } from 'zod'
import { closePage, openPage, PageQuery } from '../platform/pagination'
import type { AppDeps } from '../http/deps'
import { envelope, ifMatchVersion, listEnvelope, ok, okVersioned, page } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { stateOf } from '../http/request-state'
import { sessionCookie } from '../http/session-cookie'
import { sessionEnvelope } from '../sessions/respond'
import { CurrentUserSessionDto, AuthSessionEnvelopeSwaggerDto } from '../sessions/model'
import { listSessions } from '../sessions/service'
import { adminRequestPasswordReset } from '../password-resets/service'
import { invalidateOtherSessions } from '../sessions/service'
import {
  AdminPasswordResetRequestedDto, AuthMeResponseDto, ChangePasswordBodyDto, ChangePasswordResponseEnvelopeDto, CreateUserBody,
  InvalidateOtherSessionsResponseDto, isProvisioning, ProvisionedUserDto, UpdateCurrentUserBodyDto, UpdateCurrentUserResponseDto,
} from './model'
import { changePassword, describeMe, provisionUser, registerUser, toUserDto, updateMe, type AccountsEnv } from './service'

/** What the account services need from the process-wide dependencies. */
export const accountsEnv = (deps: AppDeps): AccountsEnv => ({ config: deps.config, secretsKey: deps.keys.secrets, mail: deps.mail })

export const usersRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: '/users', tags: ['Accounts'] })
    .use(httpConventions(deps))
    .post('', async ({ body, request, set }) => {
      const st = stateOf(request)
      if (body.mode !== undefined && body.role !== undefined) {
        // The principal was resolved by `optionalAuth` below, before the idempotency key was scoped to its tenant.
        set.status = 201
        return ok(request, await provisionUser(deps.sql, accountsEnv(deps), st.principal!, { ...body, mode: body.mode, role: body.role }))
      }
      const { user, session } = await registerUser(deps.sql, deps.config, { email: body.email, password: body.password! }, { userAgent: request.headers.get('user-agent'), ip: st.ip })
      set.status = 201
      set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
      return ok(request, await sessionEnvelope(deps, user.id, null, session))
    }, {
      // The administrator variant must authenticate; the self-registration one is anonymous whatever it presents.
      optionalAuth: { requirement: 'tenant:manage', when: isProvisioning }, idempotent: true, errors: ['A400', 'A409'],
      body: CreateUserBody, response: { 201: z.union([AuthSessionEnvelopeSwaggerDto, envelope(ProvisionedUserDto)]) },
      detail: {
        summary: 'Register an account and start a session (public), or provision a member of your tenant (tenant:manage)',
        'x-permissions': ['tenant:manage'],
      },
    })
    .get('/me', async ({ request, principal, set }) => {
      const { me, version } = await describeMe(deps.sql, principal.userId, principal.membership?.id ?? null)
      return okVersioned(request, set, version, me)
    }, {
      auth: 'user', errors: ['A400'], response: { 200: envelope(AuthMeResponseDto) },
      detail: { summary: 'The signed-in user, their memberships and the current one' },
    })
    .patch('/me', async ({ request, principal, body, set }) => {
      const row = await updateMe(deps.sql, principal.userId, ifMatchVersion(request), body.displayName)
      return okVersioned(request, set, row.version, toUserDto(row))
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
    .patch('/me/password', async ({ request, principal, body }) => ok(request, await changePassword(deps.sql, principal, body)), {
      auth: 'tenant:read', errors: ['A400', 'A409'], body: ChangePasswordBodyDto, response: { 200: ChangePasswordResponseEnvelopeDto },
      detail: { summary: 'Change your password (the current one is required); optionally end your other sessions' },
    })
    .post('/me/other-session-invalidation-requests', async ({ request, principal }) => ok(request, await invalidateOtherSessions(deps.sql, principal)), {
      auth: 'tenant:read', idempotent: true, errors: ['A400', 'A409'], response: { 200: envelope(InvalidateOtherSessionsResponseDto) },
      detail: { summary: 'Sign out every other session of yours (all of them when called with a PAT)' },
    })
    .post('/:userId/password-reset-requests', async ({ request, principal, params, set }) => {
      const result = await adminRequestPasswordReset(deps.sql, accountsEnv(deps), principal, params.userId)
      set.status = 202
      return ok(request, result)
    }, {
      auth: 'tenant:manage', idempotent: true, errors: ['A400', 'A404r', 'A409'], params: z.object({ userId: z.string() }),
      response: { 202: envelope(AdminPasswordResetRequestedDto) },
      detail: { summary: 'Mail a password reset to a member of your tenant' },
    })
