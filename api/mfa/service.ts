import { randomBytes } from 'node:crypto'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { sha256 } from '../platform/crypto'
import { open, seal, type DerivedKeys } from '../platform/keyring'
import type { Db, Sql } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError, rateLimited } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import type { RequestContext } from '../identity/context'
import type { Principal } from '../identity/service'
import { recordAudit } from '../audit/service'
import { markSessionSecondFactor } from '../sessions/queries'
import { findUserById } from '../users/queries'
import { dispatchNoticeMail, notify } from '../notifications/service'
import { methodsFor } from './challenges'
import type { WebAuthnCredential } from './model'
import {
  deleteTotp,
  deleteWebAuthnCredential,
  findTotp,
  listWebAuthnCredentials,
  mfaSummaryOf,
  releaseMfaFailureSlot,
  replaceRecoveryCodes,
  reserveMfaFailureSlot,
  spendRecoveryCode,
  upsertPendingTotp,
  useTotpStep,
  type WebAuthnCredentialRow,
} from './queries'
import { acceptedTotpStep, newTotpSecret, qrCodeDataUrl, TOTP_DIGITS, TOTP_PERIOD, totpUri } from './totp'
import { passwordlessOptions, registrationOptions, storeCredential, verifyAssertion, verifyRegistration } from './webauthn'

export const RECOVERY_CODE_COUNT = 10
/** Wrong second-factor answers a user may give per window (all challenges and re-authentications together). */
export const MFA_FAILURE_BUDGET = 10
export const MFA_FAILURE_WINDOW_SECONDS = 900

const invalidCode = (path: string, message: string) => new ApiError('VALIDATION_ERROR', message, { errors: [{ path, message }] })

/** Runs `check` on one slot of the user's failure budget, taken before the answer is looked at; a right answer
 *  gives the slot back. 429 while the budget is full: nothing is even checked then. */
async function withinFailureBudget(sql: Sql, userId: string, check: () => Promise<boolean>): Promise<boolean> {
  const reserved = await reserveMfaFailureSlot(sql, userId, MFA_FAILURE_BUDGET, MFA_FAILURE_WINDOW_SECONDS)
  if ('retryAfter' in reserved) {
    const { retryAfter } = reserved
    throw rateLimited('Too many wrong second-factor answers', {
      budget: 'second_factor',
      limit: MFA_FAILURE_BUDGET,
      windowSeconds: MFA_FAILURE_WINDOW_SECONDS,
      retryAfter,
    })
  }
  const ok = await check()
  if (ok) await releaseMfaFailureSlot(sql, reserved.slot)
  return ok
}

async function userOf(db: Db, userId: string) {
  const user = await findUserById(db, userId)
  if (!user) throw new ApiError('UNAUTHORIZED', 'The account behind this credential no longer exists')
  return user
}

/** The session making the request, when it is one: a factor proven there counts for it. */
const sessionOf = (p: Principal) => (p.credential === 'session' ? p.credentialId : null)

// ── Status ──────────────────────────────────────────────────────────────────────────────────────────────────

export async function mfaStatus({ sql: db }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext) {
  const m = await mfaSummaryOf(db, ctx.principal.userId)
  return {
    totp: { status: m.totp_status ?? ('none' as const), activatedAt: m.totp_activated_at?.toISOString() ?? null },
    webauthnCredentials: m.passkeys,
    recoveryCodesRemaining: m.recovery_codes_left,
    methods: methodsFor(m.totp_status === 'active', m.passkeys),
  }
}

// ── TOTP ────────────────────────────────────────────────────────────────────────────────────────────────────

export async function startTotpEnrolment({ sql: db, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext) {
  const { userId } = ctx.principal
  const user = await userOf(db, userId)
  const secret = newTotpSecret()
  if (!(await upsertPendingTotp(db, userId, seal(keys, 'secrets', secret)))) {
    throw new ApiError('BAD_REQUEST', 'TOTP is already active; remove it (DELETE /v1/users/me/mfa/totp) before enrolling a new authenticator')
  }
  const otpauthUri = totpUri(secret, user.email)
  return { secret, otpauthUri, qrCodeDataUrl: await qrCodeDataUrl(otpauthUri), period: TOTP_PERIOD, digits: TOTP_DIGITS }
}

/** Whether `code` is a current TOTP code of the user's active factor (or, with `activate`, its pending one); the
 *  step it belongs to is recorded in the same statement that accepts it, so the code never works again. */
async function spendTotpCode(db: Db, keys: DerivedKeys, userId: string, code: string, activate = false): Promise<boolean> {
  const totp = await findTotp(db, userId)
  if (!totp || totp.status !== (activate ? 'pending' : 'active')) return false
  const step = await acceptedTotpStep(open(keys, 'secrets', totp.secret_sealed), code, totp.last_used_step === null ? null : Number(totp.last_used_step))
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

/** A code of the new authenticator proves the factor in the session enrolling it too. */
export async function verifyTotpEnrolment(deps: Pick<ServiceDeps, 'sql' | 'keys' | 'mail'>, ctx: RequestContext, code: string) {
  const { sql, keys } = deps
  const { userId } = ctx.principal
  const sessionId = sessionOf(ctx.principal)
  const totp = await findTotp(sql, userId)
  if (totp?.status !== 'pending') throw new ApiError('BAD_REQUEST', 'No TOTP enrolment is in progress; start one with POST /v1/users/me/mfa/totp')
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
  const done = await sql.begin(async (tx) => {
    if (!(await spendTotpCode(tx, keys, userId, code, true)))
      throw invalidCode('body.code', 'This code is not the current one of the authenticator being enrolled')
    await replaceRecoveryCodes(
      tx,
      userId,
      codes.map((c) => sha256(normaliseRecoveryCode(c))),
    )
    if (sessionId) await markSessionSecondFactor(tx, sessionId, userId)
    const entry = await recordAudit(tx, ctx, {
      action: 'user.totp_enrolled',
      target: { type: 'user', id: userId },
      details: { recoveryCodes: RECOVERY_CODE_COUNT },
    })
    const note = await notify(tx, keys, { userId, kind: 'account.totp_enrolled', fields: {}, dedupeKey: `audit:${entry.id}` })
    return { result: { recoveryCodes: codes }, note }
  })
  await dispatchNoticeMail(deps, ctx, [done.note])
  return done.result
}

/** Removing an active factor takes a current code or a recovery code; a pending enrolment is simply dropped (it
 *  was never a factor, so nothing is recorded). A wrong code is recorded as a refused removal: a stolen session
 *  trying to strip the second factor is what the owner wants to see. */
export async function removeTotp(deps: Pick<ServiceDeps, 'sql' | 'keys' | 'mail'>, ctx: RequestContext, reauthenticationCode: string | undefined) {
  const { sql, keys } = deps
  const { userId } = ctx.principal
  const totp = await findTotp(sql, userId)
  const active = totp?.status === 'active'
  const method = reauthenticationCode && /^\d{6}$/.test(reauthenticationCode) ? 'totp' : 'recovery_code'
  if (active) {
    const path = 'body.reauthenticationCode'
    if (!reauthenticationCode) throw invalidCode(path, 'A current TOTP code or an unused recovery code is required to remove TOTP')
    const ok = await withinFailureBudget(sql, userId, () =>
      method === 'totp' ? spendTotpCode(sql, keys, userId, reauthenticationCode) : spendRecovery(sql, userId, reauthenticationCode),
    )
    if (!ok) {
      await recordAudit(sql, ctx, {
        action: 'user.totp_removed',
        target: { type: 'user', id: userId },
        outcome: 'failure',
        reason: 'invalid_code',
        details: { method },
      })
      throw invalidCode(path, 'This is neither a current TOTP code nor an unused recovery code')
    }
  }
  const note = await sql.begin(async (tx) => {
    await deleteTotp(tx, userId)
    if (!active) return null
    const entry = await recordAudit(tx, ctx, { action: 'user.totp_removed', target: { type: 'user', id: userId }, details: { method } })
    return notify(tx, keys, { userId, kind: 'account.totp_removed', fields: {}, dedupeKey: `audit:${entry.id}` })
  })
  await dispatchNoticeMail(deps, ctx, [note])
  return { removed: true as const }
}

// ── Passkeys ────────────────────────────────────────────────────────────────────────────────────────────────

export const toCredentialDto = (r: WebAuthnCredentialRow): WebAuthnCredential => ({
  id: r.id,
  name: r.name,
  credentialId: r.credential_id,
  transports: r.transports,
  deviceType: r.device_type,
  backedUp: r.backed_up,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
})

export async function passkeyRegistrationOptions({ sql: db, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext) {
  const user = await userOf(db, ctx.principal.userId)
  return registrationOptions(db, config, { id: user.id, email: user.email, displayName: user.display_name })
}

/** The registration is verified (and its challenge spent, even when it fails) before the transaction that stores
 *  the passkey, marks the session's factor and records it. */
export async function registerPasskey(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'keys' | 'mail'>,
  ctx: RequestContext,
  input: { name?: string; response: unknown },
) {
  const { sql, config } = deps
  const { userId } = ctx.principal
  const sessionId = sessionOf(ctx.principal)
  const verified = await verifyRegistration(sql, config, userId, input.response as RegistrationResponseJSON)
  const { row: credential, note } = await sql.begin(async (tx) => {
    const row = await storeCredential(tx, userId, verified, input.name ?? null)
    if (sessionId) await markSessionSecondFactor(tx, sessionId, userId)
    await recordAudit(tx, ctx, {
      action: 'user.passkey_added',
      target: { type: 'passkey', id: row.id },
      details: { name: row.name, deviceType: row.device_type, backedUp: row.backed_up },
    })
    const note = await notify(tx, deps.keys, { userId, kind: 'account.passkey_added', fields: { passkeyId: row.id }, dedupeKey: `passkey_added:${row.id}` })
    return { row, note }
  })
  await dispatchNoticeMail(deps, ctx, [note])
  return toCredentialDto(credential)
}

export async function listPasskeys({ sql: db, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, params: PageParams) {
  const { userId } = ctx.principal
  const binding = { route: 'GET /users/me/webauthn/credentials', scope: `user:${userId}`, filters: {} }
  const p = await paginate(keys, binding, params, (after, limit) => listWebAuthnCredentials(db, userId, after, limit), createdCursorOf)
  return mapPage(p, toCredentialDto)
}

export async function removePasskey(deps: Pick<ServiceDeps, 'sql' | 'keys' | 'mail'>, ctx: RequestContext, id: string) {
  const { sql } = deps
  const { userId } = ctx.principal
  const notFound = () => new ApiError('RESOURCE_NOT_FOUND', 'You have no passkey with this id')
  if (!isUuid(id)) throw notFound()
  const note = await sql.begin(async (tx) => {
    const removed = await deleteWebAuthnCredential(tx, userId, id)
    if (!removed) throw notFound()
    await recordAudit(tx, ctx, { action: 'user.passkey_removed', target: { type: 'passkey', id }, details: { name: removed.name } })
    return notify(tx, deps.keys, { userId, kind: 'account.passkey_removed', fields: { passkeyId: id }, dedupeKey: `passkey_removed:${id}` })
  })
  await dispatchNoticeMail(deps, ctx, [note])
  return { removed: true as const }
}

// ── Answering a challenge ───────────────────────────────────────────────────────────────────────────────────

export type SecondFactorAnswer = { method: 'totp' | 'recovery_code'; code: string } | { method: 'webauthn'; assertion: unknown }

/** Whether the answer is one of the user's second factors. Refused with 429 while the user's wrong answers fill
 *  the budget; a wrong answer keeps the budget slot it took. A passkey answer must sign `webauthnChallenge`. */
export async function checkSecondFactor(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'keys'>,
  userId: string,
  answer: SecondFactorAnswer,
  webauthnChallenge: string | null,
): Promise<boolean> {
  const { sql } = deps
  return withinFailureBudget(sql, userId, async () => {
    if (answer.method !== 'webauthn') {
      return answer.method === 'totp' ? spendTotpCode(sql, deps.keys, userId, answer.code) : spendRecovery(sql, userId, answer.code)
    }
    const assertion = answer.assertion as AuthenticationResponseJSON
    return (
      webauthnChallenge !== null && (await verifyAssertion(sql, deps.config, assertion, webauthnChallenge, { requireUserVerification: false, userId })) !== null
    )
  })
}

export const passkeySignInOptions = async (deps: Pick<ServiceDeps, 'sql' | 'config'>) => ({ options: await passwordlessOptions(deps.sql, deps.config) })
