import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ok } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import { AuthLoginOptionsDto, LoginOptionsQuery } from './model'
import { loginOptions } from './service'

export const loginOptionsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/auth', tags: ['Sessions'] })
    .use(http)
    .get('/login-options', async ({ request, query }) => ok(request, await loginOptions(deps, query.email)), {
      public: true,
      errors: ['A400'],
      query: LoginOptionsQuery,
      response: { 200: envelope(AuthLoginOptionsDto) },
      detail: { summary: 'Which sign-in methods to offer, optionally for an email address (by its domain only)' },
    })
