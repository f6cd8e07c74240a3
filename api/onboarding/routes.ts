import { Elysia } from 'elysia'
import { z } from 'zod'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { sessionCookie } from '../http/session-cookie'
import { sessionEnvelope } from '../sign-in/respond'
import { AuthSessionEnvelopeSwaggerDto } from '../sign-in/model'
import { CreateUserBody, isProvisioning, ProvisionedUserDto } from '../users/model'
import { describeMe } from '../users/service'
import { provisionUser, registerUser } from './accounts'
import {
  CreateTenantInvitationBodyDto,
  InvitationAcceptanceRequestDto,
  InvitationAcceptanceResultDto,
  ListTenantInvitationsQuery,
  RegistrationCompleteBodyDto,
  RegistrationInvitationBodyDto,
  RegistrationInvitationCreatedDto,
  RegistrationInvitationValidationDto,
  RegistrationValidationQuery,
  TenantInvitationDto,
} from './model'
import type { RequestContext } from '../identity/context'
import type { Principal } from '../identity/service'
import { acceptInvitation, completeRegistration, inviteToRegister, inviteToTenant, listInvitations, revokeInvitation, validateRegistration } from './service'

/** `optionalAuth` narrows the principal, not the context that carries it. */
const signedIn = (ctx: RequestContext<Principal | null>): ctx is RequestContext => ctx.principal !== null

/** Every way an account or a membership comes to exist: self-registration and administrator provisioning
 *  (POST /users), tenant invitations (tenant:manage to send, list and revoke; acceptance by the invitee) and
 *  public registration invitations. */
export const onboardingRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Invitations'] })
    .use(http)
    .post(
      '/users',
      async ({ body, request, ctx, set }) => {
        if (body.mode !== undefined && body.role !== undefined && signedIn(ctx)) {
          // The principal was resolved by `optionalAuth` below, before the idempotency key was scoped to its tenant.
          set.status = 201
          return ok(request, await provisionUser(deps, ctx, { ...body, mode: body.mode, role: body.role }))
        }
        const { user, session } = await registerUser(deps, ctx, { email: body.email, password: body.password! })
        set.status = 201
        set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
        return ok(request, await sessionEnvelope(deps, user.id, null, session))
      },
      {
        // The administrator variant must authenticate; the self-registration one is anonymous whatever it presents.
        optionalAuth: { requirement: 'tenant:manage', when: isProvisioning },
        idempotent: true,
        errors: ['A400', 'A409'],
        body: CreateUserBody,
        response: { 201: z.union([AuthSessionEnvelopeSwaggerDto, envelope(ProvisionedUserDto)]) },
        detail: {
          ...links({ userId: '$response.body#/data/user/id' }, ['POST /v1/users/{userId}/password-reset-requests']),
          summary: 'Register an account and start a session (public), or provision a member of your tenant (tenant:manage)',
          'x-permissions': ['tenant:manage'],
          tags: ['Accounts'],
        },
      },
    )
    .post(
      '/tenant-invitations',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await inviteToTenant(deps, ctx, body))
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'A409'],
        body: CreateTenantInvitationBodyDto,
        response: { 201: envelope(TenantInvitationDto) },
        detail: {
          ...links({ invitationId: '$response.body#/data/id' }, ['DELETE /v1/tenant-invitations/{invitationId}']),
          summary: `Invite an address to the current tenant with a role; mails a single-use link (7 days)`,
        },
      },
    )
    .get('/tenant-invitations', async ({ request, ctx, query }) => page(request, await listInvitations(deps, ctx, query)), {
      auth: 'tenant:manage',
      errors: ['T400p'],
      query: ListTenantInvitationsQuery,
      response: { 200: listEnvelope(TenantInvitationDto) },
      detail: { summary: 'Invitations of the current tenant, newest first (pending unless status says otherwise)' },
    })
    .delete('/tenant-invitations/:invitationId', async ({ request, ctx, params }) => ok(request, await revokeInvitation(deps, ctx, params.invitationId)), {
      auth: 'tenant:manage',
      errors: ['T400', 'T404', 'A409i'],
      response: { 200: envelope(TenantInvitationDto) },
      detail: { summary: 'Revoke a pending invitation; its link then answers INVITATION_REVOKED' },
    })
    .post(
      '/tenant-invitations/acceptance-records',
      async ({ request, ctx, body, set }) => {
        // Signed in: the invitation joins this user. Anonymous: the account is created (new addresses only). Either
        // way the session sits in the new membership only when that tenant's policy admits it.
        const { userId, currentMembershipId, session } = await acceptInvitation(deps, ctx, body)
        set.status = 201
        if (!session) return ok(request, (await describeMe(deps, userId, currentMembershipId)).me)
        set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
        return ok(request, await sessionEnvelope(deps, userId, currentMembershipId, session))
      },
      {
        optionalAuth: 'user',
        idempotent: true,
        errors: ['A400i', 'A409i'],
        body: InvitationAcceptanceRequestDto,
        response: { 201: envelope(InvitationAcceptanceResultDto) },
        detail: {
          summary: 'Accept a tenant invitation: joins the signed-in user, or creates the account (and a session) for a new address',
          security: [{}, { bearerAuth: [] }, { sessionCookie: [] }],
          'x-permissions': [],
        },
      },
    )
    .post(
      '/registration-invitations',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await inviteToRegister(deps, ctx, body.email))
      },
      {
        public: true,
        idempotent: true,
        errors: ['A400i', 'A409i'],
        body: RegistrationInvitationBodyDto,
        response: { 201: envelope(RegistrationInvitationCreatedDto) },
        detail: { summary: 'Mail a single-use link to finish registering this address (7 days)' },
      },
    )
    .get('/registration-invitations/validation', async ({ request, ctx, query }) => ok(request, await validateRegistration(deps, ctx, query.token)), {
      public: true,
      errors: ['A400i'],
      query: RegistrationValidationQuery,
      response: { 200: envelope(RegistrationInvitationValidationDto) },
      detail: { summary: 'The address a registration link is for, or data: null when the link is unusable' },
    })
    .post(
      '/registration-invitations/completions',
      async ({ request, ctx, body, set }) => {
        const { userId, session } = await completeRegistration(deps, ctx, body)
        set.status = 201
        set.headers['set-cookie'] = sessionCookie(deps.config, session.token, session.expiresAt)
        return ok(request, await sessionEnvelope(deps, userId, null, session))
      },
      {
        public: true,
        idempotent: true,
        errors: ['A400i', 'A409i'],
        body: RegistrationCompleteBodyDto,
        response: { 201: envelope(InvitationAcceptanceResultDto) },
        detail: { summary: 'Create the account of a registration link and start a session' },
      },
    )
