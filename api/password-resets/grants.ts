import { randomInt, randomUUID } from 'node:crypto'
import { publicBase } from '../platform/config'
import { hmac, randomToken, sha256 } from '../platform/crypto'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { insertReset, type ResetRow } from './queries'

export const RESET_MINUTES = 15
export const CODE_DIGITS = 8

/** The code is bound to its grant, and keyed: a database dump alone cannot search the small code space. */
export const codeDigest = (secretsKey: Buffer, grantId: string, code: string) => hmac(secretsKey, `password-reset-code:${grantId}:${code}`)

/** A single-use grant to set a password: a link token (≥ 256 bits, SHA-256 stored) and, for resets, a short code. */
export async function issueGrant(tx: Db, deps: Pick<ServiceDeps, 'config' | 'keys'>, g: { userId: string; kind: ResetRow['kind']; ttlSeconds: number }) {
  const id = randomUUID()
  const token = randomToken(32)
  const code = g.kind === 'reset' ? String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0') : null
  await insertReset(tx, {
    id,
    userId: g.userId,
    kind: g.kind,
    tokenHash: sha256(token),
    codeHash: code ? codeDigest(deps.keys.secrets, id, code) : null,
    ttlSeconds: g.ttlSeconds,
  })
  // The console's pages (api/console/routes.ts LINK_PAGES), which choose the password through /v1.
  const path = g.kind === 'reset' ? '/console/password-reset' : '/console/activate'
  return { link: `${publicBase(deps.config)}${path}?token=${encodeURIComponent(token)}`, code }
}
