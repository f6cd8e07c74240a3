import { randomBytes } from 'node:crypto'
import { hmac, safeEqual, sha256 } from '../platform/crypto'
import type { DerivedKeys } from '../platform/keyring'

// Credential formats. Only SHA-256 digests are stored; the prefixes let secret scanners and our own
// auth plugin tell a PAT from a session token without a lookup.
export const PAT_PREFIX = 'rcp_pat_'
export const SESSION_PREFIX = 'rcp_ses_'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const PAT_BODY_LEN = 30 // 30 base62 chars ≈ 178 bits of randomness
const CHECKSUM_LEN = 6

function base62(bytes: Uint8Array, length: number): string {
  let out = ''
  let i = 0
  // Rejection sampling keeps every character uniform (248 = 4 * 62).
  while (out.length < length) {
    if (i >= bytes.length) {
      bytes = randomBytes(length)
      i = 0
    }
    const b = bytes[i++]!
    if (b < 248) out += BASE62[b % 62]
  }
  return out
}

/** The body's CRC-32 in six base62 digits. The body is ASCII, so CRC-32 of its UTF-8 bytes is the checksum every
 *  issued token carries (test/unit/pat-checksum.test.ts pins known ones). */
function checksum(body: string): string {
  let n = Bun.hash.crc32(body)
  let out = ''
  for (let i = 0; i < CHECKSUM_LEN; i++) {
    out = BASE62[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}

export function newPat(): { token: string; hash: Buffer; displayPrefix: string } {
  const body = base62(randomBytes(PAT_BODY_LEN * 2), PAT_BODY_LEN)
  const token = `${PAT_PREFIX}${body}${checksum(body)}`
  return { token, hash: sha256(token), displayPrefix: token.slice(0, PAT_PREFIX.length + 6) }
}

/** Offline check (as secret scanners do): right prefix, length, alphabet and checksum. */
export function isWellFormedPat(token: string): boolean {
  if (!token.startsWith(PAT_PREFIX) || token.length !== PAT_PREFIX.length + PAT_BODY_LEN + CHECKSUM_LEN) return false
  const rest = token.slice(PAT_PREFIX.length)
  if (!/^[0-9A-Za-z]+$/.test(rest)) return false
  return checksum(rest.slice(0, PAT_BODY_LEN)) === rest.slice(PAT_BODY_LEN)
}

export function newSessionToken(): { token: string; hash: Buffer } {
  const token = `${SESSION_PREFIX}${randomBytes(32).toString('base64url')}`
  return { token, hash: sha256(token) }
}

/** The CSRF token is a MAC of the session id: bound to one session, nothing extra to store. */
export const csrfTokenFor = (key: Buffer, sessionId: string): string => hmac(key, sessionId).toString('base64url')

/** Whether `sent` is the session's CSRF token under any key of the ring: one issued before a rotation stays valid
 *  until its key leaves SECRET_KEY. */
export const csrfTokenMatches = (keys: DerivedKeys, sessionId: string, sent: string): boolean =>
  keys.ring.some((k) => safeEqual(Buffer.from(sent), Buffer.from(csrfTokenFor(k.csrf, sessionId))))
