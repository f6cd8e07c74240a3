import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, ok, okVersioned } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { AuthMeResponseDto, ChangePasswordBodyDto, ChangePasswordResponseEnvelopeDto, UpdateCurrentUserBodyDto, UpdateCurrentUserResponseDto } from './model'
import { changePassword, describeCurrentUser, toUserDto, updateMe } from './service'

/** The signed-in account: its profile and password. Registration and provisioning are api/onboarding/. */
export const usersRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/users', tags: ['Accounts'] })
    .use(http)
    .get(
      '/me',
      async ({ request, ctx, set }) => {
        const { me, version } = await describeCurrentUser(deps, ctx)
        return okVersioned(request, set, version, me)
      },
      {
        auth: 'user',
        errors: ['A400'],
        response: { 200: envelope(AuthMeResponseDto) },
        detail: { summary: 'The signed-in user, their memberships and the current one' },
      },
    )
    .patch(
      '/me',
      async ({ request, ctx, body, set }) => {
        const row = await updateMe(deps, ctx, ifMatchVersion(request), body.displayName)
        return okVersioned(request, set, row.version, toUserDto(row))
      },
      {
        auth: 'tenant:read',
        errors: ['A400', 'A409', 'P412'],
        body: UpdateCurrentUserBodyDto,
        response: { 200: envelope(UpdateCurrentUserResponseDto) },
        detail: { summary: 'Update the signed-in user (If-Match optional)' },
      },
    )
    .patch('/me/password', async ({ request, ctx, body }) => ok(request, await changePassword(deps, ctx, body)), {
      auth: 'tenant:read',
      errors: ['A400', 'A409'],
      body: ChangePasswordBodyDto,
      response: { 200: ChangePasswordResponseEnvelopeDto },
      detail: { summary: 'Change your password (the current one is required); optionally end your other sessions' },
    })
