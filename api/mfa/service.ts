import { randomBytes } from 'node:crypto'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import type { Config } from '../platform/config'
import { decryptSecret, encryptSecret, sha256 } from '../platform/crypto'
import type { Db, Sql } from '../platform/db'
import { ApiError, rateLimited } from '../platform/errors'
import { getAuthPolicy } from '../auth-policy/service'
import { startSession, type SessionContext } from '../sessions/service'
import { findUserById, listUserMemberships } from '../users/queries'
import { methodsOf } from './challenges'
import type { WebAuthnCredential } from './model'
import {
  confirmMfaChallenge, countMfaChallengeFailure, countRecoveryCodesLeft, countWebAuthnCredentials, deleteTotp,
  deleteWebAuthnCredential, findOpenMfaChallenge, findTotp, listWebAuthnCredentials, recentMfaFailures, recordMfaFailure,
  replaceRecoveryCodes, secondFactorsOf, spendRecoveryCode, upsertPendingTotp, useTotpStep, type WebAuthnCredentialRow,
} from './queries'
import { acceptedTotpStep, newTotpSecret, qrCodeDataUrl, TOTP_DIGITS, TOTP_PERIOD, totpUri } from './totp'
import { passwordlessOptions, registerCredential, registrationOptions, verifyAssertion, verifyPasswordlessAssertion } from './webauthn'

export const RECOVERY_CODE_COUNT = 10
/** Wrong answers a sign-in challenge takes before it is burnt: with a 6-digit code and two live steps, a guesser
 *  has 10 in a million per password typed, and the password attempts are throttled on their own. */
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5

/** Wrong second-factor answers a user may give per window (all challenges and re-authentications together). */
export const MFA_FAILURE_BUDGET = 10
export const MFA_FAILURE_WINDOW_SECONDS = 900

const invalidCode = (path: string, message: string) => new ApiError('VALIDATION_ERROR', message, { errors: [{ path, message }] })

/** 429 while the user's wrong answers fill the budget; nothing is even checked then. */
async function requireFailureBudget(db: Db, userId: string): Promise<void> {
  const { failures, retryAfter } = await recentMfaFailures(db, userId, MFA_FAILURE_WINDOW_SECONDS)
  if (failures < MFA_FAILURE_BUDGET) return
  throw rateLimited('Too many wrong second-factor answers', { limit: MFA_FAILURE_BUDGET, windowSeconds: MFA_FAILURE_WINDOW_SECONDS, retryAfter })
}

const recordFailure = (db: Db, userId: string) => recordMfaFailure(db, userId, MFA_FAILURE_WINDOW_SECONDS)

async function userOf(db: Db, userId: string) {
  const user = await findUserById(db, userId)
  if (!user) throw new ApiError('UNAUTHORIZED', 'The account behind this credential no longer exists')
  return user
}

// ── Status ──────────────────────────────────────────────────────────────────────────────────────────────────

export async function mfaStatus(db: Db, userId: string) {
  const [totp, passkeys, left, factors] = await Promise.all([
    findTotp(db, userId), countWebAuthnCredentials(db, userId), countRecoveryCodesLeft(db, userId), secondFactorsOf(db, userId),
  ])
  return {
    totp: { status: totp?.status ?? ('none' as const), activatedAt: totp?.activated_at?.toISOString() ?? null },
    webauthnCredentials: passkeys,
    recoveryCodesRemaining: left,
    methods: methodsOf(factors),
  }
}

// ── TOTP ────────────────────────────────────────────────────────────────────────────────────────────────────

export async function startTotpEnrolment(db: Db, secrets: Buffer, userId: string) {
  const user = await userOf(db, userId)
  const secret = newTotpSecret()
  if (!(await upsertPendingTotp(db, userId, encryptSecret(secrets, secret)))) {
    throw new ApiError('BAD_REQUEST', 'TOTP is already active; remove it (DELETE /v1/users/me/mfa/totp) before enrolling a new authenticator')
  }
  const otpauthUri = totpUri(secret, user.email)
  return { secret, otpauthUri, qrCodeDataUrl: await qrCodeDataUrl(otpauthUri), period: TOTP_PERIOD, digits: TOTP_DIGITS }
}

/** Whether `code` is a current TOTP code of the user's active factor (or, with `activate`, its pending one); the
 *  step it belongs to is recorded in the same statement that accepts it, so the code never works again. */
async function spendTotpCode(db: Db, secrets: Buffer, userId: string, code: string, activate = false): Promise<boolean> {
  const totp = await findTotp(db, userId)
  if (!totp || totp.status !== (activate ? 'pending' : 'active')) return false
  const step = await acceptedTotpStep(decryptSecret(secrets, totp.secret_sealed), code, totp.last_used_step === null ? null : Number(totp.last_used_step))
  return step !== null && (await useTotpStep(db, userId, step, activate))
}

const RECOVERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'
const normaliseRecoveryCode = (code: string) => code.toLowerCase().replace(/[^a-z2-7]/g, '')

/** 80 random bits each, as xxxx-xxxx-xxxx-xxxx; only their SHA-256 is stored (80 bits cannot be searched). */
function newRecoveryCode(): string {
  const bytes = randomBytes(16)
  let out = ''
  for (let i = 0; i < 16; i++) out += RECOVERY_ALPHABET[bytes[i]! & 31]
  return out.match(/.{4}/g)!.join('-')
}

const spendRecovery = (db: Db, userId: string, code: string) => spendRecoveryCode(db, userId, sha256(normaliseRecoveryCode(code)))

export async function verifyTotpEnrolment(sql: Sql, secrets: Buffer, userId: string, code: string) {
  const totp = await findTotp(sql, userId)
  if (totp?.status !== 'pending') throw new ApiError('BAD_REQUEST', 'No TOTP enrolment is in progress; start one with POST /v1/users/me/mfa/totp')
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
  return sql.begin(async (tx) => {
    if (!(await spendTotpCode(tx, secrets, userId, code, true))) throw invalidCode('body.code', 'This code is not the current one of the authenticator being enrolled')
    await replaceRecoveryCodes(tx, userId, codes.map((c) => sha256(normaliseRecoveryCode(c))))
    return { recoveryCodes: codes }
  })
}

/** Removing an active factor takes a current code or a recovery code; a pending enrolment is simply dropped. */
export async function removeTotp(sql: Sql, secrets: Buffer, userId: string, reauthenticationCode: string | undefined) {
  const totp = await findTotp(sql, userId)
  if (totp?.status === 'active') {
    const path = 'body.reauthenticationCode'
    if (!reauthenticationCode) throw invalidCode(path, 'A current TOTP code or an unused recovery code is required to remove TOTP')
    await requireFailureBudget(sql, userId)
    const ok = /^\d{6}$/.test(reauthenticationCode)
      ? await spendTotpCode(sql, secrets, userId, reauthenticationCode)
      : await spendRecovery(sql, userId, reauthenticationCode)
    if (!ok) {
      await recordFailure(sql, userId)
      throw invalidCode(path, 'This is neither a current TOTP code nor an unused recovery code')
    }
  }
  await sql.begin((tx) => deleteTotp(tx, userId))
  return { removed: true as const }
}

// ── Passkeys ────────────────────────────────────────────────────────────────────────────────────────────────

export const toCredentialDto = (r: WebAuthnCredentialRow): WebAuthnCredential => ({
  id: r.id, name: r.name, credentialId: r.credential_id, transports: r.transports, deviceType: r.device_type, backedUp: r.backed_up,
  createdAt: r.created_at.toISOString(), lastUsedAt: r.last_used_at?.toISOString() ?? null,
})

export async function passkeyRegistrationOptions(db: Db, config: Config, userId: string) {
  const user = await userOf(db, userId)
  return registrationOptions(db, config, { id: user.id, email: user.email, displayName: user.display_name })
}

export async function registerPasskey(db: Db, config: Config, userId: string, input: { name?: string; response: unknown }) {
  return toCredentialDto(await registerCredential(db, config, userId, input.response as RegistrationResponseJSON, input.name ?? null))
}

export async function listPasskeys(db: Db, userId: string, after: { createdAt: string; id: string } | null, size: number) {
  const rows = await listWebAuthnCredentials(db, userId, after, size + 1)
  return rows.map((r) => ({ cursor: { createdAt: r.cursor_at, id: r.id }, dto: toCredentialDto(r) }))
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export async function removePasskey(db: Db, userId: string, id: string) {
  if (!UUID.test(id) || !(await deleteWebAuthnCredential(db, userId, id))) {
    throw new ApiError('RESOURCE_NOT_FOUND', 'You have no passkey with this id')
  }
  return { removed: true as const }
}

// ── Sign-in ─────────────────────────────────────────────────────────────────────────────────────────────────

type ChallengeAnswer =
  | { challengeId: string; method: 'totp' | 'recovery_code'; code: string }
  | { challengeId: string; method: 'webauthn'; assertion: unknown }

const challengeFailed = () => new ApiError('UNAUTHORIZED', 'The second factor was not accepted')

/** Lifts the gate of the session the challenge belongs to. Wrong answers count against the challenge; an
 *  unknown, expired, answered or burnt challenge answers the same 401 as a wrong code. */
export async function confirmChallenge(sql: Sql, config: Config, secrets: Buffer, input: ChallengeAnswer) {
  const ch = await findOpenMfaChallenge(sql, input.challengeId, MFA_CHALLENGE_MAX_ATTEMPTS)
  if (!ch) throw new ApiError('UNAUTHORIZED', 'This challenge is unknown, expired, already answered or burnt by wrong answers; sign in again')
  await requireFailureBudget(sql, ch.user_id)
  let ok: boolean
  if (input.method === 'webauthn') {
    const assertion = input.assertion as AuthenticationResponseJSON
    ok = ch.webauthn_challenge !== null
      && (await verifyAssertion(sql, config, assertion, ch.webauthn_challenge, { requireUserVerification: false, userId: ch.user_id })) !== null
  } else {
    ok = input.method === 'totp' ? await spendTotpCode(sql, secrets, ch.user_id, input.code) : await spendRecovery(sql, ch.user_id, input.code)
  }
  if (!ok) {
    await Promise.all([countMfaChallengeFailure(sql, ch.id), recordFailure(sql, ch.user_id)])
    throw challengeFailed()
  }
  const confirmed = await confirmMfaChallenge(sql, ch.id)
  if (!confirmed) throw challengeFailed()
  return { userId: ch.user_id, membershipId: confirmed.membership_id }
}

/** Where a passkey sign-in lands: the first active membership whose tenant admits passkeys (and does not enforce
 *  SSO); none, when the user has no active membership at all. */
async function passkeySignInMembership(db: Db, config: Config, userId: string): Promise<{ membershipId: string | null; blocked: boolean }> {
  const active = (await listUserMemberships(db, userId)).filter((m) => m.status === 'active')
  for (const m of active) {
    const { policy } = await getAuthPolicy(db, m.tenant_id, config)
    if (policy.allowedSignInMethods.includes('passkey') && !policy.ssoEnforced) return { membershipId: m.id, blocked: false }
  }
  return { membershipId: null, blocked: active.length > 0 }
}

/** A discoverable passkey with user verification is both factors at once: the session starts ungated. */
export async function signInWithPasskey(sql: Sql, config: Config, assertion: unknown, ctx: SessionContext) {
  const cred = await verifyPasswordlessAssertion(sql, config, assertion as AuthenticationResponseJSON)
  const user = cred ? await findUserById(sql, cred.user_id) : undefined
  if (!user || user.status !== 'active') throw new ApiError('UNAUTHORIZED', 'This passkey was not accepted')
  const { membershipId, blocked } = await passkeySignInMembership(sql, config, user.id)
  if (blocked) throw new ApiError('UNAUTHORIZED', 'Your organisation does not allow passkey sign-in: use single sign-on')
  const session = await startSession(sql, config, user.id, membershipId, ctx, { secondFactorVerified: true })
  return { user, membershipId, session }
}

export const passkeySignInOptions = async (db: Db, config: Config) => ({ options: await passwordlessOptions(db, config) })
