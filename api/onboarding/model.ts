import { z } from 'zod'
import { ROLES } from '../identity/permissions'
import { PageQuery } from '../platform/pagination'
import { SessionInfoDto } from '../sign-in/model'
import { AuthMeResponseDto, Email, Password } from '../users/model'

export const TENANT_INVITATION_DAYS = 7
export const REGISTRATION_INVITATION_DAYS = 7
export const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const

export const CreateTenantInvitationBodyDto = z
  .strictObject({
    email: Email,
    role: z.enum(ROLES),
  })
  .meta({ id: 'CreateTenantInvitationBodyDto' })

export const TenantInvitationDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    email: z.string(),
    role: z.enum(ROLES),
    status: z.enum(INVITATION_STATUSES),
    invitedByUserId: z.uuid().nullable(),
    expiresAt: z.iso.datetime(),
    acceptedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'TenantInvitationDto' })

export const ListTenantInvitationsQuery = PageQuery.extend({
  status: z.enum(INVITATION_STATUSES).optional().describe('Default pending'),
})

export const InvitationAcceptanceRequestDto = z
  .strictObject({
    token: z.string().min(1).max(512),
    password: Password.optional().describe('Needed when the invited address has no account yet'),
    displayName: z.string().trim().min(1).max(200).optional(),
  })
  .meta({ id: 'InvitationAcceptanceRequestDto' })

/** AuthMeResponseDto; `session` is added when the call created the account and signed it in. */
export const InvitationAcceptanceResultDto = AuthMeResponseDto.extend({ session: SessionInfoDto.optional() }).meta({ id: 'InvitationAcceptanceResultDto' })

export const RegistrationInvitationBodyDto = z.strictObject({ email: Email }).meta({ id: 'RegistrationInvitationBodyDto' })

export const RegistrationInvitationCreatedDto = z
  .object({
    email: z.string(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'RegistrationInvitationCreatedDto' })

export const RegistrationValidationQuery = z.object({ token: z.string().min(1).max(512) })
export const RegistrationInvitationValidationDto = z.object({ email: z.string() }).nullable()

export const RegistrationCompleteBodyDto = z
  .strictObject({
    token: z.string().min(1).max(512),
    password: Password,
    displayName: z.string().trim().min(1).max(200).optional(),
  })
  .meta({ id: 'RegistrationCompleteBodyDto' })
