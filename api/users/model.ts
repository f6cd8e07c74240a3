import { z } from 'zod'
import { ROLES } from '../identity/permissions'

export const Email = z.string().trim().toLowerCase().pipe(z.email().max(254))
export const Password = z.string().min(1).max(1024)

export const SelfRegistrationBody = z.strictObject({ email: Email, password: Password }).meta({ id: 'SelfRegistrationBodyDto' })

export const UserDto = z.object({
  id: z.uuid(),
  email: z.string(),
  displayName: z.string().nullable(),
  status: z.enum(['active', 'activation_required', 'disabled']),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
}).meta({ id: 'UserDto' })

export const MembershipSummaryDto = z.object({
  id: z.uuid(),
  tenantId: z.uuid(),
  tenantName: z.string(),
  tenantSlug: z.string(),
  role: z.enum(ROLES),
  status: z.enum(['active', 'disabled', 'expired', 'removed']),
}).meta({ id: 'MembershipSummaryDto' })

export const AuthMeResponseDto = z.object({
  user: UserDto,
  currentMembership: MembershipSummaryDto.nullable(),
  memberships: z.array(MembershipSummaryDto),
}).meta({ id: 'AuthMeResponseDto' })

export const UpdateCurrentUserBodyDto = z.strictObject({
  displayName: z.string().trim().min(1).max(200).nullable().optional(),
}).meta({ id: 'UpdateCurrentUserBodyDto' })

export const UpdateCurrentUserResponseDto = UserDto.meta({ id: 'UpdateCurrentUserResponseDto' })

export type UserDto = z.infer<typeof UserDto>
export type AuthMe = z.infer<typeof AuthMeResponseDto>
