import { z } from 'zod'
import { Email, Password } from '../users/model'

export const PasswordResetRequestBodyDto = z.strictObject({ email: Email }).meta({ id: 'PasswordResetRequestBodyDto' })

export const PasswordResetRequestedDto = z
  .object({
    accepted: z.literal(true).describe('Always true: whether the address has an account is not disclosed'),
  })
  .meta({ id: 'PasswordResetRequestedDto' })

export const PasswordResetConfirmationBodyDto = z
  .union([
    z.strictObject({ token: z.string().min(1).max(256), newPassword: Password }),
    z.strictObject({
      email: Email,
      code: z
        .string()
        .trim()
        .regex(/^[0-9]{8}$/, 'must be the 8-digit code from the mail'),
      newPassword: Password,
    }),
  ])
  .meta({ id: 'PasswordResetConfirmationBodyDto' })

export const PasswordResetConfirmationResponseDto = z
  .object({
    passwordReset: z.literal(true),
    sessionsEnded: z.number().int(),
  })
  .meta({ id: 'PasswordResetConfirmationResponseDto' })
export const AdminPasswordResetRequestedDto = z
  .object({
    userId: z.string(),
    requested: z.literal(true),
  })
  .meta({ id: 'AdminPasswordResetRequestedDto' })
