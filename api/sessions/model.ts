import { z } from 'zod'
import { AuthMeResponseDto } from '../users/model'

export const CreateSessionBodyDto = z.strictObject({
  email: z.string().trim().min(1).max(254),
  password: z.string().min(1).max(1024),
}).meta({ id: 'CreateSessionBodyDto' })

export const SessionInfoDto = z.object({
  id: z.uuid(),
  expiresAt: z.iso.datetime(),
  csrfToken: z.string().describe('Send as the x-csrf-token header on cookie-authenticated POST/PATCH/PUT/DELETE'),
}).meta({ id: 'SessionInfoDto' })

export const AuthSessionDto = AuthMeResponseDto.extend({ session: SessionInfoDto }).meta({ id: 'AuthSessionDto' })
export const AuthSessionEnvelopeSwaggerDto = z.object({
  data: AuthSessionDto,
  meta: z.object({ requestId: z.string() }),
}).meta({ id: 'AuthSessionEnvelopeSwaggerDto' })

export const CurrentUserSessionDto = z.object({
  id: z.uuid(),
  current: z.boolean(),
  userAgent: z.string().nullable(),
  ip: z.string().nullable(),
  createdAt: z.iso.datetime(),
  lastSeenAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
}).meta({ id: 'CurrentUserSessionDto' })

export type SessionInfo = z.infer<typeof SessionInfoDto>
