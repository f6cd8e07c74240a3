import { Elysia } from 'elysia'
import type { AppDeps } from '../http/deps'
import { envelope, ok } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { accountsEnv } from '../users/routes'
import { PasswordResetConfirmationBodyDto, PasswordResetConfirmationResponseDto, PasswordResetRequestBodyDto, PasswordResetRequestedDto } from './model'
import { confirmPasswordReset, requestPasswordReset } from './service'

export const passwordResetsRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: '/password-resets', tags: ['Registration and password reset'] })
    .use(httpConventions(deps))
    .post('', async ({ request, body, set }) => {
      const { background } = await requestPasswordReset(deps.sql, accountsEnv(deps), body.email)
      background.catch((err) => deps.log.error('password reset mail failed', { err }))
      set.status = 202
      return ok(request, { accepted: true as const })
    }, {
      public: true, idempotent: true, errors: ['A400', 'A409s'], body: PasswordResetRequestBodyDto,
      response: { 202: envelope(PasswordResetRequestedDto) },
      detail: { summary: 'Mail a single-use reset link and code (15 minutes) if the address has an account; always 202' },
    })
    .post('/confirmations', async ({ request, body, set }) => {
      const result = await confirmPasswordReset(deps.sql, accountsEnv(deps), body)
      set.status = 201
      return ok(request, result)
    }, {
      public: true, idempotent: true, errors: ['A400', 'A409s'], body: PasswordResetConfirmationBodyDto,
      response: { 201: envelope(PasswordResetConfirmationResponseDto) },
      detail: { summary: 'Set a new password with the link token or the email and code; ends every session of the account' },
    })
