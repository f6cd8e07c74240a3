import { Elysia } from 'elysia'
import { PageQuery } from '../platform/pagination'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import {
  CredentialIdParams,
  RemovalResultDto,
  TotpEnrollmentStartDto,
  TotpEnrollmentVerifyRequestDto,
  TotpEnrollmentVerifyResponseDto,
  TotpRemovalRequestDto,
  UserMfaStatusDto,
  WebAuthnCredentialDto,
  WebAuthnRegistrationOptionsDto,
  WebAuthnRegistrationRequestDto,
} from './model'
import {
  listPasskeys,
  mfaStatus,
  passkeyRegistrationOptions,
  registerPasskey,
  removePasskey,
  removeTotp,
  startTotpEnrolment,
  verifyTotpEnrolment,
} from './service'

/** Second factors and passkeys of the signed-in user. Signing in with them is api/sign-in/. */
export const mfaRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Multi-factor and passkeys'] })
    .use(http)
    .get('/users/me/mfa', async ({ request, ctx }) => ok(request, await mfaStatus(deps, ctx)), {
      auth: 'session:enrolment',
      errors: ['A400'],
      response: { 200: envelope(UserMfaStatusDto) },
      detail: { summary: 'Enrolled second factors and recovery codes left' },
    })
    .post(
      '/users/me/mfa/totp',
      async ({ request, ctx, set }) => {
        set.status = 201
        return ok(request, await startTotpEnrolment(deps, ctx))
      },
      {
        auth: 'session:enrolment',
        errors: ['A400', 'A409'],
        response: { 201: envelope(TotpEnrollmentStartDto) },
        detail: { summary: 'Start TOTP enrolment: a new secret, its otpauth URI and QR code (replaces an unfinished enrolment)' },
      },
    )
    .post(
      '/users/me/mfa/totp/verifications',
      async ({ request, ctx, body, set }) => {
        const result = await verifyTotpEnrolment(deps, ctx, body.code)
        set.status = 201
        return ok(request, result)
      },
      {
        auth: 'session:enrolment',
        errors: ['A400', 'A409'],
        body: TotpEnrollmentVerifyRequestDto,
        response: { 201: envelope(TotpEnrollmentVerifyResponseDto) },
        detail: { summary: 'Activate TOTP with a current code; answers the recovery codes, shown this once' },
      },
    )
    .delete('/users/me/mfa/totp', async ({ request, ctx, body }) => ok(request, await removeTotp(deps, ctx, body?.reauthenticationCode)), {
      auth: 'session',
      errors: ['A400', 'A409'],
      body: TotpRemovalRequestDto.nullish(),
      response: { 200: envelope(RemovalResultDto) },
      detail: { summary: 'Remove TOTP and its recovery codes; needs a current code or a recovery code' },
    })
    .get('/users/me/webauthn/credentials', async ({ request, ctx, query }) => page(request, await listPasskeys(deps, ctx, query)), {
      auth: 'session',
      errors: ['A400p'],
      query: PageQuery,
      response: { 200: listEnvelope(WebAuthnCredentialDto) },
      detail: { summary: 'Your passkeys, newest first' },
    })
    .post(
      '/users/me/webauthn/registration-options',
      async ({ request, ctx, set }) => {
        set.status = 201
        return ok(request, await passkeyRegistrationOptions(deps, ctx))
      },
      {
        auth: 'session:enrolment',
        idempotent: 'user',
        errors: ['A400', 'A409'],
        response: { 201: envelope(WebAuthnRegistrationOptionsDto) },
        detail: { summary: 'Options for navigator.credentials.create(); the challenge is single-use and lives 5 minutes' },
      },
    )
    .post(
      '/users/me/webauthn/registrations',
      async ({ request, ctx, body, set }) => {
        const credential = await registerPasskey(deps, ctx, body)
        set.status = 201
        return ok(request, credential)
      },
      {
        auth: 'session:enrolment',
        idempotent: 'user',
        errors: ['A400', 'A409'],
        body: WebAuthnRegistrationRequestDto,
        response: { 201: envelope(WebAuthnCredentialDto) },
        detail: { summary: 'Register a passkey from the response to the registration options' },
      },
    )
    .delete(
      '/users/me/webauthn/credentials/:credentialId',
      async ({ request, ctx, params }) => ok(request, await removePasskey(deps, ctx, params.credentialId)),
      {
        auth: 'session',
        errors: ['A400', 'A404r', 'A409'],
        params: CredentialIdParams,
        response: { 200: envelope(RemovalResultDto) },
        detail: { summary: 'Remove a passkey' },
      },
    )
