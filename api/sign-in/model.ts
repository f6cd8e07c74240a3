import { z } from 'zod'
import { MfaChallengeDto, WebAuthnAssertionDto } from '../mfa/model'
import { AuthMeResponseDto } from '../users/model'

// Either a password, or a passkey assertion over a challenge from POST /sessions/passkey-challenges.
export const CreateSessionBodyDto = z
  .union([
    z.strictObject({
      email: z.string().trim().min(1).max(254),
      password: z.string().min(1).max(1024),
    }),
    z.strictObject({ assertion: WebAuthnAssertionDto }),
  ])
  .meta({ id: 'CreateSessionBodyDto' })

export const SessionInfoDto = z
  .object({
    id: z.uuid(),
    expiresAt: z.iso.datetime(),
    csrfToken: z.string().describe('Send as the x-csrf-token header on cookie-authenticated POST/PATCH/PUT/DELETE'),
    state: z
      .enum(['active', 'mfa_required', 'mfa_enrolment_required'])
      .describe('mfa_required: answer mfaChallenge first; mfa_enrolment_required: the tenant requires a second factor, only enrolment is open'),
    mfaChallenge: MfaChallengeDto.nullable(),
  })
  .meta({ id: 'SessionInfoDto' })

export const AuthSessionDto = AuthMeResponseDto.extend({ session: SessionInfoDto }).meta({ id: 'AuthSessionDto' })
export const AuthSessionEnvelopeSwaggerDto = z
  .object({
    data: AuthSessionDto,
    meta: z.object({ requestId: z.string() }),
  })
  .meta({ id: 'AuthSessionEnvelopeSwaggerDto' })

export const SwitchCurrentMembershipBodyDto = z
  .strictObject({
    membershipId: z.string().min(1).max(64),
  })
  .meta({ id: 'SwitchCurrentMembershipBodyDto' })
