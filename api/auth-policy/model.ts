import { z } from 'zod'

export const SIGN_IN_METHODS = ['password', 'passkey', 'sso'] as const
export const PASSWORD_MIN_LENGTH_FLOOR = 8
export const PASSWORD_MIN_LENGTH_CEILING = 64
const MINUTES_MAX = 366 * 24 * 60

const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a domain name')

export const TenantAuthPolicyDto = z
  .object({
    tenantId: z.uuid(),
    mfaRequired: z.boolean(),
    allowedSignInMethods: z.array(z.enum(SIGN_IN_METHODS)),
    passwordMinLength: z.number().int(),
    sessionAbsoluteMinutes: z.number().int(),
    sessionIdleMinutes: z.number().int(),
    ssoEnforced: z.boolean(),
    allowedEmailDomains: z.array(z.string()).describe('Empty: any domain. Otherwise new members need an address in one of these'),
    updatedAt: z.iso.datetime().nullable().describe('null while the tenant has the defaults'),
  })
  .meta({ id: 'TenantAuthPolicyDto' })

export const UpdateTenantAuthPolicyRequestDto = z
  .strictObject({
    mfaRequired: z.boolean().optional(),
    allowedSignInMethods: z.array(z.enum(SIGN_IN_METHODS)).min(1).optional(),
    passwordMinLength: z.number().int().min(PASSWORD_MIN_LENGTH_FLOOR).max(PASSWORD_MIN_LENGTH_CEILING).optional(),
    sessionAbsoluteMinutes: z.number().int().min(5).max(MINUTES_MAX).optional(),
    sessionIdleMinutes: z.number().int().min(5).max(MINUTES_MAX).optional(),
    ssoEnforced: z.boolean().optional(),
    allowedEmailDomains: z.array(Domain).max(100).optional(),
  })
  .meta({ id: 'UpdateTenantAuthPolicyRequestDto' })

export type TenantAuthPolicy = z.infer<typeof TenantAuthPolicyDto>
export type AuthPolicyPatch = z.infer<typeof UpdateTenantAuthPolicyRequestDto>
