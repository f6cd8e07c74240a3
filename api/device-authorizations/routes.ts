import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ok } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import {
  ApproveDeviceAuthorizationBodyDto,
  CreateDeviceAuthorizationBodyDto,
  DenyDeviceAuthorizationBodyDto,
  DeviceAuthorizationDecisionDto,
  DeviceAuthorizationDto,
  DeviceAuthorizationLookupDto,
  DeviceAuthorizationLookupQuery,
  DeviceTokenBodyDto,
  DeviceTokenDto,
} from './model'
import { approveDeviceAuthorization, denyDeviceAuthorization, lookUpDeviceAuthorization, pollDeviceToken, startDeviceAuthorization } from './service'

/** The device authorization grant (RFC 8628): the device's two public operations, and the person's three, which
 *  only a signed-in session may call (a token cannot make another). */
export const deviceAuthorizationsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/device', tags: ['Device authorization'] })
    .use(http)
    .post(
      '/authorizations',
      async ({ request, ctx, body, set }) => {
        const started = await startDeviceAuthorization(deps, deps.limiter, ctx, body)
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return ok(request, started)
      },
      {
        public: true,
        errors: ['A400s'],
        body: CreateDeviceAuthorizationBodyDto,
        response: { 201: envelope(DeviceAuthorizationDto) },
        detail: {
          summary: 'Start a device sign-in: a device code to poll with and a user code for a person to approve in the console (10 minutes)',
        },
      },
    )
    .post(
      '/tokens',
      async ({ request, ctx, body, set }) => {
        const token = await pollDeviceToken(deps, ctx, body.deviceCode)
        set.headers['cache-control'] = 'no-store'
        return ok(request, token)
      },
      {
        public: true,
        errors: ['A400s', 'D400'],
        body: DeviceTokenBodyDto,
        response: { 200: envelope(DeviceTokenDto) },
        detail: {
          summary:
            'Poll for the token: 400 with error authorization_pending, slow_down (wait 5 s longer from now on), expired_token or access_denied until it is approved; then the token, once',
        },
      },
    )
    .get(
      '/authorizations/lookup',
      async ({ request, ctx, query, set }) => {
        set.headers['cache-control'] = 'no-store'
        return ok(request, await lookUpDeviceAuthorization(deps, ctx, query.userCode))
      },
      {
        auth: 'session',
        errors: ['A400s', 'A404'],
        query: DeviceAuthorizationLookupQuery,
        response: { 200: envelope(DeviceAuthorizationLookupDto) },
        detail: {
          summary: 'What the device with this user code asks for (each code entered, here or to approve or deny, spends a small budget: 429 once it is spent)',
        },
      },
    )
    .post('/authorizations/approve', async ({ request, ctx, body }) => ok(request, await approveDeviceAuthorization(deps, ctx, body)), {
      auth: 'session',
      errors: ['A400', 'T404'],
      body: ApproveDeviceAuthorizationBodyDto,
      response: { 200: envelope(DeviceAuthorizationDecisionDto) },
      detail: { summary: 'Approve the device for one of your tenants: its token will carry exactly the scopes it asked for, which you must hold there' },
    })
    .post('/authorizations/deny', async ({ request, ctx, body }) => ok(request, await denyDeviceAuthorization(deps, ctx, body)), {
      auth: 'session',
      errors: ['A400s', 'A404'],
      body: DenyDeviceAuthorizationBodyDto,
      response: { 200: envelope(DeviceAuthorizationDecisionDto) },
      detail: { summary: 'Deny the device: its next poll answers access_denied' },
    })
