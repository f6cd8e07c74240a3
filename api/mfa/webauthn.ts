import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server'
import type { Config } from '../platform/config'
import type { Db } from '../platform/db'
import { ApiError } from '../platform/errors'
import {
  findWebAuthnCredential,
  insertWebAuthnChallenge,
  insertWebAuthnCredential,
  listAllWebAuthnCredentials,
  recordWebAuthnUse,
  takeWebAuthnChallenge,
  type WebAuthnCredentialRow,
} from './queries'

export const RP_NAME = 'Robot Control Plane'
export const CHALLENGE_TTL_SECONDS = 300

type WebAuthnConfig = Pick<Config, 'WEBAUTHN_RP_ID' | 'WEBAUTHN_ORIGINS'>

/** The relying party every ceremony names, or AUTH_PROVIDER_NOT_CONFIGURED: a deployment with WEBAUTHN_RP_ID set
 *  empty offers no passkeys, whatever a tenant's policy allows (its default allows them), so each ceremony is refused
 *  before a challenge is issued or spent. */
export function relyingParty(config: WebAuthnConfig): { rpID: string; origins: string[] } {
  if (!passkeysConfigured(config)) {
    throw new ApiError('AUTH_PROVIDER_NOT_CONFIGURED', 'Passkeys are not configured on this deployment: sign in with a password or single sign-on')
  }
  return { rpID: config.WEBAUTHN_RP_ID, origins: config.WEBAUTHN_ORIGINS }
}

export const passkeysConfigured = (config: Pick<Config, 'WEBAUTHN_RP_ID'>): boolean => config.WEBAUTHN_RP_ID !== ''

const invalid = (path: string, message: string) => new ApiError('VALIDATION_ERROR', message, { errors: [{ path, message }] })

/** The challenge the browser signed, read from clientDataJSON; the server then looks it up and spends it. */
export function signedChallenge(clientDataJSON: string, path: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown }
    if (typeof parsed.challenge === 'string' && parsed.challenge.length > 0) return parsed.challenge
  } catch {
    /* reported below */
  }
  throw invalid(path, 'clientDataJSON is not a WebAuthn client data object')
}

export async function registrationOptions(
  db: Db,
  config: WebAuthnConfig,
  user: { id: string; email: string; displayName: string | null },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpID } = relyingParty(config)
  const existing = await listAllWebAuthnCredentials(db, user.id)
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID,
    userName: user.email,
    userDisplayName: user.displayName ?? user.email,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    excludeCredentials: existing.map((c) => ({ id: c.credential_id, transports: c.transports })),
    // Discoverable, so the same passkey also signs in without an email; verified, so it is two factors in one.
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  })
  await insertWebAuthnChallenge(db, { challenge: options.challenge, purpose: 'registration', userId: user.id, ttlSeconds: CHALLENGE_TTL_SECONDS })
  return options
}

/** What a verified registration stores. */
export type VerifiedRegistration = Omit<Parameters<typeof insertWebAuthnCredential>[1], 'userId' | 'name'>

/** Spends the registration's challenge and verifies it; the caller stores the result (storeCredential) in its own
 *  transaction, so a failed verification still burns the challenge. */
export async function verifyRegistration(db: Db, config: WebAuthnConfig, userId: string, response: RegistrationResponseJSON): Promise<VerifiedRegistration> {
  const rp = relyingParty(config)
  const challenge = signedChallenge(response.response.clientDataJSON, 'body.response.response.clientDataJSON')
  if (!(await takeWebAuthnChallenge(db, challenge, 'registration', userId))) {
    throw invalid('body.response', 'This registration answers no live challenge of yours; request new registration options')
  }
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpID,
      requireUserVerification: true,
    })
  } catch (err) {
    throw invalid('body.response', `The passkey registration could not be verified: ${(err as Error).message}`)
  }
  if (!verified.verified) throw invalid('body.response', 'The passkey registration could not be verified')
  const info = verified.registrationInfo
  return {
    credentialId: info.credential.id,
    publicKey: info.credential.publicKey,
    signCount: info.credential.counter,
    transports: info.credential.transports ?? response.response.transports ?? [],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
  }
}

export async function storeCredential(tx: Db, userId: string, verified: VerifiedRegistration, name: string | null): Promise<WebAuthnCredentialRow> {
  const row = await insertWebAuthnCredential(tx, { ...verified, userId, name })
  if (!row) throw invalid('body.response', 'This passkey is already registered')
  return row
}

/** Options for an assertion: a second factor of one user (their credentials listed) or a passwordless sign-in. */
export async function authenticationOptions(
  config: WebAuthnConfig,
  allow: { credential_id: string; transports: string[] }[] | null,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: relyingParty(config).rpID,
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    userVerification: allow ? 'preferred' : 'required',
    ...(allow ? { allowCredentials: allow.map((c) => ({ id: c.credential_id, transports: c.transports })) } : {}),
  })
}

export async function passwordlessOptions(db: Db, config: WebAuthnConfig): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await authenticationOptions(config, null)
  await insertWebAuthnChallenge(db, { challenge: options.challenge, purpose: 'sign_in', userId: null, ttlSeconds: CHALLENGE_TTL_SECONDS })
  return options
}

/** Verifies an assertion against a stored credential: signature, origin, RP ID, challenge, user presence (and
 *  verification when asked), and a sign counter that must move forward. null when anything fails. */
export async function verifyAssertion(
  db: Db,
  config: WebAuthnConfig,
  response: AuthenticationResponseJSON,
  expectedChallenge: string,
  opts: { requireUserVerification: boolean; userId?: string },
): Promise<WebAuthnCredentialRow | null> {
  const rp = relyingParty(config)
  const credential = await findWebAuthnCredential(db, response.id)
  if (!credential || (opts.userId !== undefined && credential.user_id !== opts.userId)) return null
  const { requireUserVerification } = opts
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpID,
      requireUserVerification,
      credential: {
        id: credential.credential_id,
        publicKey: new Uint8Array(credential.public_key),
        counter: Number(credential.sign_count),
        transports: credential.transports,
      },
    })
    if (!result.verified) return null
    return (await recordWebAuthnUse(db, credential.id, result.authenticationInfo.newCounter)) ? credential : null
  } catch {
    return null // a cloned authenticator (counter went back), a wrong origin, a bad signature: all the same to the caller
  }
}

export async function verifyPasswordlessAssertion(db: Db, config: WebAuthnConfig, response: AuthenticationResponseJSON): Promise<WebAuthnCredentialRow | null> {
  relyingParty(config)
  let challenge: string
  try {
    challenge = signedChallenge(response.response.clientDataJSON, 'body.assertion')
  } catch {
    return null
  }
  if (!(await takeWebAuthnChallenge(db, challenge, 'sign_in', null))) return null
  return verifyAssertion(db, config, response, challenge, { requireUserVerification: true })
}
