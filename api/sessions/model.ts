import { z } from 'zod'

export const CurrentUserSessionDto = z
  .object({
    id: z.uuid(),
    current: z.boolean(),
    userAgent: z.string().nullable(),
    ip: z.string().nullable(),
    createdAt: z.iso.datetime(),
    lastSeenAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'CurrentUserSessionDto' })

export const SessionInvalidateAllResponseDto = z
  .object({
    invalidated: z.number().int().describe('How many sessions were ended, this one included'),
  })
  .meta({ id: 'SessionInvalidateAllResponseDto' })

export const InvalidateOtherSessionsResponseDto = z
  .object({
    invalidated: z.number().int().describe('How many sessions were ended'),
  })
  .meta({ id: 'InvalidateOtherSessionsResponseDto' })

export const CurrentSessionDto = z
  .object({
    id: z.uuid(),
    expiresAt: z.iso.datetime(),
    csrfToken: z.string().describe('Send as the x-csrf-token header on cookie-authenticated POST/PATCH/PUT/DELETE'),
  })
  .meta({ id: 'CurrentSessionDto' })
