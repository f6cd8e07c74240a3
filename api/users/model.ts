import { z } from 'zod'
import { PASSWORD_MIN_LENGTH } from '../identity/passwords'
import { ROLES } from '../identity/permissions'

// RFC 5321 caps the local part at 64 octets; a JSON Schema "email" validator refuses longer ones, so do we.
export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(
    z
      .email()
      .max(254)
      .refine((e) => e.indexOf('@') <= 64, 'the part before @ is at most 64 characters'),
  )
export const Password = z.string().min(1).max(1024)

export const UserDto = z
  .object({
    id: z.uuid(),
    email: z.string(),
    displayName: z.string().nullable(),
    status: z
      .enum(['active', 'activation_required', 'disabled', 'erased'])
      .describe('erased: the account was erased (DELETE /v1/users/me); its data is a pseudonym'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'UserDto' })

export const MembershipSummaryDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    tenantName: z.string(),
    tenantSlug: z.string(),
    role: z.enum(ROLES),
    status: z.enum(['active', 'disabled', 'expired', 'removed']),
  })
  .meta({ id: 'MembershipSummaryDto' })

export const AuthMeResponseDto = z
  .object({
    user: UserDto,
    currentMembership: MembershipSummaryDto.nullable(),
    memberships: z.array(MembershipSummaryDto),
    billingBlock: z
      .array(z.string())
      .optional()
      .describe(
        'GET /v1/users/me only: why the current tenant is billing-blocked (unpaid, canceled, paused, operator), read with the credential as the new-work gate reads it; empty when it is not, or without a current tenant',
      ),
  })
  .meta({ id: 'AuthMeResponseDto' })

export const UpdateCurrentUserBodyDto = z
  .strictObject({
    displayName: z.string().trim().min(1).max(200).nullable().optional(),
  })
  .meta({ id: 'UpdateCurrentUserBodyDto' })

export const UpdateCurrentUserResponseDto = UserDto.meta({ id: 'UpdateCurrentUserResponseDto' })

export type UserDto = z.infer<typeof UserDto>
export type AuthMe = z.infer<typeof AuthMeResponseDto>

export const AdminUserProvisioningBodyDto = z
  .strictObject({
    mode: z.enum(['invite', 'create']).describe('invite: mails an activation link; create: mails an initial password to be changed at first sign-in'),
    role: z.enum(ROLES),
    email: Email,
    displayName: z.string().trim().min(1).max(200).nullable().optional(),
  })
  .meta({ id: 'AdminUserProvisioningBodyDto' })

/** POST /users takes one of two variants: self-registration `{email, password}` (public) or administrator provisioning
 *  `{mode, role, email, displayName?}` (tenant:manage). One object with a refinement rather than a zod union, so a
 *  field error keeps its path (a union failure would report only "body"). */
export const CreateUserBody = z
  .strictObject({
    email: Email,
    // The password policy's length (checkPasswordPolicy answers PASSWORD_POLICY_VIOLATION), for the document.
    password: Password.optional().meta({ minLength: PASSWORD_MIN_LENGTH }).describe('Self-registration only'),
    mode: AdminUserProvisioningBodyDto.shape.mode.optional().describe('Provisioning only'),
    role: z.enum(ROLES).optional().describe('Provisioning only'),
    displayName: AdminUserProvisioningBodyDto.shape.displayName.describe('Provisioning only'),
  })
  .superRefine((b, ctx) => {
    const admin = ['mode', 'role', 'displayName'].filter((k) => k in b)
    if (b.password !== undefined) {
      for (const k of admin) ctx.addIssue({ code: 'custom', path: [k], message: 'not allowed with password (self-registration)' })
    } else if (b.mode === undefined) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'required (or mode and role, to provision a member)' })
    } else if (b.role === undefined) {
      ctx.addIssue({ code: 'custom', path: ['role'], message: 'required with mode' })
    }
  })
  .meta({
    id: 'CreateUserBodyDto',
    description: 'Self-registration {email, password} or administrator provisioning {mode, role, email, displayName?}',
    // The two variants superRefine checks, for the document (its field errors stay as they are).
    oneOf: [
      { required: ['email', 'password'], properties: { mode: false, role: false, displayName: false } },
      { required: ['email', 'mode', 'role'], properties: { password: false } },
    ],
  })
export const isProvisioning = (body: unknown): boolean => typeof body === 'object' && body !== null && 'mode' in body && !('password' in body)

export const ProvisionedUserDto = z
  .object({
    user: UserDto,
    membership: z.object({
      id: z.uuid(),
      tenantId: z.uuid(),
      userId: z.uuid(),
      role: z.enum(ROLES),
      status: z.enum(['active', 'disabled', 'expired', 'removed']),
    }),
    delivery: z.enum(['activation_link_mailed', 'initial_password_mailed']),
  })
  .meta({ id: 'ProvisionedUserDto' })

export const ChangePasswordBodyDto = z
  .strictObject({
    currentPassword: z.string().max(1024).optional().describe('Required when the account has a password'),
    newPassword: Password,
    endOtherSessions: z.boolean().default(false).describe('Also sign out every other session'),
  })
  .meta({ id: 'ChangePasswordBodyDto' })

export const ChangePasswordResponseEnvelopeDto = z
  .object({
    data: z.object({ passwordChanged: z.literal(true), otherSessionsEnded: z.number().int() }),
    meta: z.object({ requestId: z.string() }),
  })
  .meta({ id: 'ChangePasswordResponseEnvelopeDto' })

export const AdminPasswordResetRequestedDto = z
  .object({
    userId: z.string(),
    requested: z.literal(true),
  })
  .meta({ id: 'AdminPasswordResetRequestedDto' })
