import { generate, generateSecret, generateURI, verify } from 'otplib'
import QRCode from 'qrcode'

// RFC 6238 as authenticator apps implement it: SHA-1, 6 digits, 30 s steps. A code is accepted for its own step
// and at most one step back (clock skew, a code typed as it rolled over), never ahead, and never for a step at or
// before the last accepted one (§5.2: a verifier must not accept the second attempt of a valid code).
export const TOTP_PERIOD = 30
export const TOTP_DIGITS = 6
export const TOTP_ISSUER = 'Robot Control Plane'

export const newTotpSecret = (): string => generateSecret({ length: 20 }) // 160 bits, RFC 4226's recommendation

export const totpUri = (secret: string, accountName: string): string =>
  generateURI({ issuer: TOTP_ISSUER, label: accountName, secret, period: TOTP_PERIOD, digits: TOTP_DIGITS })

export const qrCodeDataUrl = (text: string): Promise<string> => QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 2, width: 240 })

/** The 30 s step `code` belongs to, or null when it is wrong, too old, ahead, or not after `lastUsedStep`. */
export async function acceptedTotpStep(secret: string, code: string, lastUsedStep: number | null, epoch = Date.now() / 1000): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null
  const result = await verify({
    secret,
    token: code,
    period: TOTP_PERIOD,
    digits: TOTP_DIGITS,
    epoch: Math.floor(epoch),
    epochTolerance: [TOTP_PERIOD, 0],
    ...(lastUsedStep === null ? {} : { afterTimeStep: lastUsedStep }),
  })
  return result.valid && 'timeStep' in result ? result.timeStep : null
}

/** The code of the step holding `epoch` (tests, and the RFC 6238 vectors with 8 digits). */
export const totpCode = (secret: string, epoch = Date.now() / 1000, digits: 6 | 8 = TOTP_DIGITS): Promise<string> =>
  generate({ secret, period: TOTP_PERIOD, digits, epoch: Math.floor(epoch) })
