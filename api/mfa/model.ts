import { z } from 'zod'

const b64url = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, 'must be base64url')

/** What navigator.credentials.get() returns, as @simplewebauthn/browser serialises it. */
export const WebAuthnAssertionDto = z
  .looseObject({
    id: b64url(1024),
    rawId: b64url(1024),
    type: z.literal('public-key'),
    response: z.looseObject({
      clientDataJSON: b64url(8192),
      authenticatorData: b64url(8192),
      signature: b64url(16384), // post-quantum (ML-DSA) signatures run to several KiB
      userHandle: b64url(1024).optional(),
    }),
    authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  })
  .meta({ id: 'WebAuthnAssertionDto' })

/** What navigator.credentials.create() returns, as @simplewebauthn/browser serialises it. */
const WebAuthnAttestationDto = z
  .looseObject({
    id: b64url(1024),
    rawId: b64url(1024),
    type: z.literal('public-key'),
    response: z.looseObject({
      clientDataJSON: b64url(8192),
      attestationObject: b64url(65536),
      transports: z.array(z.string().max(32)).max(10).optional(),
    }),
    authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  })
  .meta({ id: 'WebAuthnAttestationDto' })

const WebAuthnRequestOptionsDto = z
  .looseObject({
    challenge: z.string(),
    rpId: z.string().optional(),
    timeout: z.number().optional(),
    userVerification: z.string().optional(),
    allowCredentials: z.array(z.looseObject({ id: z.string(), type: z.string(), transports: z.array(z.string()).optional() })).optional(),
  })
  .describe('PublicKeyCredentialRequestOptionsJSON: pass to @simplewebauthn/browser startAuthentication({ optionsJSON })')
  .meta({ id: 'WebAuthnRequestOptionsDto' })

export const MfaMethodDto = z.enum(['totp', 'recovery_code', 'webauthn'])

export const MfaChallengeDto = z
  .object({
    id: z.uuid(),
    methods: z.array(MfaMethodDto),
    webauthn: WebAuthnRequestOptionsDto.nullable(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'MfaChallengeDto' })

export const MfaChallengeConfirmRequestDto = z
  .discriminatedUnion('method', [
    z.strictObject({
      challengeId: z.uuid(),
      method: z.literal('totp'),
      code: z
        .string()
        .trim()
        .regex(/^\d{6}$/, 'must be 6 digits'),
    }),
    z.strictObject({ challengeId: z.uuid(), method: z.literal('recovery_code'), code: z.string().trim().min(1).max(64) }),
    z.strictObject({ challengeId: z.uuid(), method: z.literal('webauthn'), assertion: WebAuthnAssertionDto }),
  ])
  .meta({ id: 'MfaChallengeConfirmRequestDto' })

export const PasskeySignInOptionsDto = z.object({ options: WebAuthnRequestOptionsDto }).meta({ id: 'PasskeySignInOptionsDto' })

export const UserMfaStatusDto = z
  .object({
    totp: z.object({ status: z.enum(['none', 'pending', 'active']), activatedAt: z.iso.datetime().nullable() }),
    webauthnCredentials: z.number().int().describe('registered passkeys'),
    recoveryCodesRemaining: z.number().int(),
    methods: z.array(MfaMethodDto).describe('what a sign-in challenge of this user accepts'),
  })
  .meta({ id: 'UserMfaStatusDto' })

export const TotpEnrollmentStartDto = z
  .object({
    secret: z.string().describe('Base32; shown once'),
    otpauthUri: z.string(),
    qrCodeDataUrl: z.string().describe('data:image/png;base64 QR code of otpauthUri'),
    period: z.number().int(),
    digits: z.number().int(),
  })
  .meta({ id: 'TotpEnrollmentStartDto' })

export const TotpEnrollmentVerifyRequestDto = z
  .strictObject({
    code: z
      .string()
      .trim()
      .regex(/^\d{6}$/, 'must be 6 digits'),
  })
  .meta({ id: 'TotpEnrollmentVerifyRequestDto' })

export const TotpEnrollmentVerifyResponseDto = z
  .object({
    recoveryCodes: z.array(z.string()).describe('Shown once; each works once in place of a TOTP code'),
  })
  .meta({ id: 'TotpEnrollmentVerifyResponseDto' })

export const TotpRemovalRequestDto = z
  .strictObject({
    reauthenticationCode: z.string().trim().min(1).max(64).optional().describe('A current TOTP code or an unused recovery code'),
  })
  .meta({ id: 'TotpRemovalRequestDto' })

export const RemovalResultDto = z.object({ removed: z.literal(true) }).meta({ id: 'RemovalResultDto' })

export const WebAuthnRegistrationOptionsDto = z
  .looseObject({
    challenge: z.string(),
    rp: z.object({ id: z.string().optional(), name: z.string() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.object({ type: z.string(), alg: z.number() })),
    timeout: z.number().optional(),
    excludeCredentials: z.array(z.looseObject({ id: z.string(), type: z.string() })).optional(),
    authenticatorSelection: z.record(z.string(), z.unknown()).optional(),
    attestation: z.string().optional(),
  })
  .describe('PublicKeyCredentialCreationOptionsJSON: pass to @simplewebauthn/browser startRegistration({ optionsJSON })')
  .meta({ id: 'WebAuthnRegistrationOptionsDto' })

export const WebAuthnRegistrationRequestDto = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional(),
    response: WebAuthnAttestationDto,
  })
  .meta({ id: 'WebAuthnRegistrationRequestDto' })

export const WebAuthnCredentialDto = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    credentialId: z.string(),
    transports: z.array(z.string()),
    deviceType: z.string().describe('singleDevice or multiDevice'),
    backedUp: z.boolean(),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebAuthnCredentialDto' })

export const CredentialIdParams = z.object({ credentialId: z.string().max(64) })

export type WebAuthnCredential = z.infer<typeof WebAuthnCredentialDto>
