import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ok } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { clearedSessionCookie } from '../http/session-cookie'
import { exportPersonalData } from './export'
import { AccountErasureDto, PersonalDataExportDto } from './model'
import { eraseAccount } from './service'

/** Additive (issue 37): a person's own data: erasing the account (GDPR Art. 17) and exporting it (Art. 20). */
export const personalDataRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/users', tags: ['Accounts'] })
    .use(http)
    .get(
      '/me/export',
      async ({ request, ctx, set }) => {
        set.headers['cache-control'] = 'no-store'
        return ok(request, await exportPersonalData(deps, ctx))
      },
      {
        auth: 'user',
        errors: ['A400'],
        response: { 200: envelope(PersonalDataExportDto) },
        detail: {
          summary:
            'Your own data as JSON (GDPR Art. 20): profile, memberships, sessions, token and factor metadata, the audit entries you acted in; never a secret',
        },
      },
    )
    .delete(
      '/me',
      async ({ request, ctx, set }) => {
        const erased = await eraseAccount(deps, ctx)
        set.headers['set-cookie'] = clearedSessionCookie(deps.config)
        return ok(request, erased)
      },
      {
        auth: 'user',
        errors: ['A400', 'A409', 'T409'],
        response: { 200: envelope(AccountErasureDto) },
        detail: {
          summary:
            'Erase your account: from a session that signed in or answered its second factor in the last 5 minutes (else FORBIDDEN). LAST_OWNER_PROTECTION (409) names the tenants you alone own; LEGAL_HOLD_ACTIVE (409) while a legal hold covers you',
        },
      },
    )
