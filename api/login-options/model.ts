import { z } from 'zod'

export const LoginOptionsQuery = z.object({
  email: z.string().trim().max(254).optional().describe("Optional: the options for this address's domain"),
})

export const AuthLoginOptionsDto = z
  .object({
    password: z.boolean(),
    passkey: z.boolean(),
    ssoEnforced: z.boolean().describe('A tenant claiming the domain requires single sign-on'),
    sso: z.array(z.object({ connectionId: z.string(), name: z.string() })),
  })
  .meta({ id: 'AuthLoginOptionsDto' })
