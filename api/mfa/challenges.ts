import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { Config } from '../platform/config'
import type { Db } from '../platform/db'
import { insertMfaChallenge, secondFactorsOf } from './queries'
import { authenticationOptions, CHALLENGE_TTL_SECONDS } from './webauthn'

export type MfaMethod = 'totp' | 'recovery_code' | 'webauthn'
export type SessionState = 'active' | 'mfa_required' | 'mfa_enrolment_required'

export interface MfaChallenge {
  id: string
  methods: MfaMethod[]
  webauthn: PublicKeyCredentialRequestOptionsJSON | null
  expiresAt: Date
}

export type SecondFactors = Awaited<ReturnType<typeof secondFactorsOf>>

/** The methods a user can answer a challenge with; empty when they have no second factor. */
export function methodsFor(activeTotp: boolean, passkeys: number): MfaMethod[] {
  return [...(activeTotp ? (['totp', 'recovery_code'] as const) : []), ...(passkeys > 0 ? (['webauthn'] as const) : [])]
}

export const methodsOf = (f: SecondFactors): MfaMethod[] => methodsFor(f.totp, f.webauthn.length)

/** Called before a password session is stored: whether it must start gated, and by which factors. */
export async function pendingSecondFactors(db: Db, userId: string): Promise<SecondFactors | null> {
  const f = await secondFactorsOf(db, userId)
  return methodsOf(f).length > 0 ? f : null
}

/** The challenge a gated session answers at POST /sessions/mfa-challenges/confirmations. */
export async function openMfaChallenge(db: Db, config: Config, userId: string, sessionId: string, f: SecondFactors): Promise<MfaChallenge> {
  const webauthn = f.webauthn.length > 0 ? await authenticationOptions(config, f.webauthn) : null
  const row = await insertMfaChallenge(db, { sessionId, userId, webauthnChallenge: webauthn?.challenge ?? null, ttlSeconds: CHALLENGE_TTL_SECONDS })
  return { id: row.id, methods: methodsOf(f), webauthn, expiresAt: row.expires_at }
}
