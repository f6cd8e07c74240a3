import { Elysia } from 'elysia'
import { z } from 'zod'
import type { AppDeps } from '../compose'
import { envelope, ok } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { logIds } from '../identity/context'
import {
  AdminPasswordResetRequestedDto,
  PasswordResetConfirmationBodyDto,
  PasswordResetConfirmationResponseDto,
  PasswordResetRequestBodyDto,
  PasswordResetRequestedDto,
} from './model'
import { adminRequestPasswordReset, confirmPasswordReset, requestPasswordReset } from './service'

export const passwordResetsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Registration and password reset'] })
    .use(http)
    .post(
      '/password-resets',
      async ({ request, ctx, body, set }) => {
        const { background } = await requestPasswordReset(deps, ctx, body.email)
        // The debug line marks the background work's end, known address or not (it says which of them it was to no
        // one): what a test waits for before it asserts an unknown address left no trace.
        background.then(
          () => deps.log.debug('password reset request settled', logIds(ctx)),
          (err) => deps.log.error('password reset mail failed', { ...logIds(ctx), err }),
        )
        set.status = 202
        return ok(request, { accepted: true as const })
      },
      {
        public: true,
        idempotent: true,
        errors: ['A400', 'A409s'],
        body: PasswordResetRequestBodyDto,
        response: { 202: envelope(PasswordResetRequestedDto) },
        detail: { summary: 'Mail a single-use reset link and code (15 minutes) if the address has an account; always 202' },
      },
    )
    .post(
      '/password-resets/confirmations',
      async ({ request, ctx, body, set }) => {
        const result = await confirmPasswordReset(deps, ctx, body)
        set.status = 201
        return ok(request, result)
      },
      {
        public: true,
        idempotent: true,
        errors: ['A400', 'A409s'],
        body: PasswordResetConfirmationBodyDto,
        response: { 201: envelope(PasswordResetConfirmationResponseDto) },
        detail: { summary: 'Set a new password with the link token or the email and code; ends every session of the account' },
      },
    )
    .post(
      '/users/:userId/password-reset-requests',
      async ({ request, ctx, params, set }) => {
        const result = await adminRequestPasswordReset(deps, ctx, params.userId)
        set.status = 202
        return ok(request, result)
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['A400', 'A404r', 'A409'],
        params: z.object({ userId: z.string() }),
        response: { 202: envelope(AdminPasswordResetRequestedDto) },
        detail: { summary: 'Mail a password reset to a member of your tenant', tags: ['Accounts'] },
      },
    )
