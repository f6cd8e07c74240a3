import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { Config } from '../platform/config'
import type { Db } from '../platform/db'
import { secondFactorsOf } from './queries'
import { authenticationOptions, passkeysConfigured } from './webauthn'

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

/** The factors a challenge can ask for; null when there are none (the session starts ungated). */
export const pendingOf = (f: SecondFactors): SecondFactors | null => (methodsOf(f).length > 0 ? f : null)

/** Called before a password session is stored: whether it must start gated, and by which factors. */
export async function pendingSecondFactors(db: Db, userId: string): Promise<SecondFactors | null> {
  return pendingOf(await secondFactorsOf(db, userId))
}

/** What the challenge of a gated session offers (answered at POST /sessions/mfa-challenges/confirmations). The
 *  session's own statement stores it (api/sign-in/queries.ts), so it costs no round trip of its own. A deployment
 *  without passkeys offers the account's other factors only (docs/security.md, "Passkeys off"). */
export async function challengeOptions(config: Config, f: SecondFactors): Promise<Pick<MfaChallenge, 'methods' | 'webauthn'>> {
  const passkeys = passkeysConfigured(config) ? f.webauthn.length : 0
  return { methods: methodsFor(f.totp, passkeys), webauthn: passkeys > 0 ? await authenticationOptions(config, f.webauthn) : null }
}
