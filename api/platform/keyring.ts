// The keyring behind SECRET_KEY (docs/operations.md "Key rotation"): several 32-byte keys, comma-separated, the first current.
// The current key signs and seals; every key still verifies and opens, so a rotation loses nothing while the
// re-seal workflow moves sealed values to the current key; then the old key can leave the list.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { deriveKey, hmac, safeEqual } from './crypto'
import type { Db } from './db'

/** One key's material, derived per purpose so no two kinds of thing share a key. */
export interface RingKey {
  /** Fingerprint of the key (16 hex characters), recorded in every value it seals; never the key itself. */
  id: string
  page: Buffer
  csrf: Buffer
  idempotency: Buffer
  secrets: Buffer
}

/** The current key's material at the top level (what signs and seals), and the whole ring for verifying. */
export interface DerivedKeys extends RingKey {
  /** Every key, the current one first. */
  ring: readonly RingKey[]
}

export type SealPurpose = 'secrets' | 'idempotency'
export type MacPurpose = 'page' | 'csrf' | 'secrets'

/** The keys of SECRET_KEY's list, as config.ts validated them. */
export const secretKeyList = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

const ringKey = (secretKey: string): RingKey => ({
  id: deriveKey(secretKey, 'key-id').subarray(0, 8).toString('hex'),
  page: deriveKey(secretKey, 'page-token'),
  csrf: deriveKey(secretKey, 'csrf'),
  idempotency: deriveKey(secretKey, 'idempotency-response'),
  secrets: deriveKey(secretKey, 'secrets-at-rest'),
})

/** Both processes derive the same ring from the same SECRET_KEY, so either opens what the other sealed. */
export function deriveKeys(secretKeys: string): DerivedKeys {
  const ring = secretKeyList(secretKeys).map(ringKey)
  if (ring.length === 0) throw new Error('SECRET_KEY lists no key')
  return { ...ring[0]!, ring }
}

// AES-256-GCM. Version 2: 0x02 | 8-byte key id | 12-byte IV | 16-byte tag | ciphertext. Version 1 (before the
// keyring): 0x01 | IV | tag | ciphertext, sealed with the only key there was; any key of the ring may open it.
const V1 = 1
const V2 = 2
const ID_BYTES = 8

export function seal(keys: DerivedKeys, purpose: SealPurpose, plaintext: string): Buffer {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keys[purpose], iv)
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return Buffer.concat([Buffer.from([V2]), Buffer.from(keys.id, 'hex'), iv, cipher.getAuthTag(), body])
}

function decrypt(key: Buffer, iv: Buffer, tag: Buffer, body: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, iv)
  decipher.setAuthTag(tag)
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8')
}

/** The id of the key that sealed `sealed` (null for a version-1 value, which does not say). */
export function sealedKeyId(sealed: Uint8Array): string | null {
  const buf = Buffer.from(sealed)
  return buf[0] === V2 ? buf.subarray(1, 1 + ID_BYTES).toString('hex') : null
}

/** True when `sealed` needs no re-seal: the current key sealed it, in the current format. */
export const sealedWithCurrent = (keys: DerivedKeys, sealed: Uint8Array): boolean => sealedKeyId(sealed) === keys.id

export function open(keys: DerivedKeys, purpose: SealPurpose, sealed: Uint8Array): string {
  const buf = Buffer.from(sealed)
  if (buf[0] === V2) {
    const id = buf.subarray(1, 1 + ID_BYTES).toString('hex')
    const key = keys.ring.find((k) => k.id === id)
    if (!key) throw new Error(`sealed with key ${id}, which SECRET_KEY no longer lists`)
    const at = 1 + ID_BYTES
    return decrypt(key[purpose], buf.subarray(at, at + 12), buf.subarray(at + 12, at + 28), buf.subarray(at + 28))
  }
  if (buf[0] !== V1) throw new Error('unknown sealed-secret version')
  for (const key of keys.ring) {
    try {
      return decrypt(key[purpose], buf.subarray(1, 13), buf.subarray(13, 29), buf.subarray(29))
    } catch {
      // GCM's tag refuses every key but the one that sealed it: try the next.
    }
  }
  throw new Error('sealed with a key SECRET_KEY no longer lists')
}

/** True when `mac` is the MAC of `data` under the purpose's key of any key in the ring: a token signed before a
 *  rotation stays valid until its key leaves the list. */
export function macMatches(keys: DerivedKeys, purpose: MacPurpose, data: string, mac: Uint8Array): boolean {
  return keys.ring.some((k) => safeEqual(mac, hmac(k[purpose], data)))
}

/** One column of sealed values, as its table's owning queries module reads and rewrites it for the re-seal
 *  (activities/reseal-batch.ts). Rows come in key order after a cursor; `replace` swaps a value only if it is still
 *  `from`, so a value changed meanwhile (a rotated webhook secret) is left to its writer, who sealed it with the
 *  current key. */
export interface SealedColumn {
  name: string
  purpose: SealPurpose
  batch(db: Db, after: string | null, limit: number): Promise<{ id: string; sealed: Buffer }[]>
  replace(db: Db, id: string, from: Buffer, to: Buffer): Promise<boolean>
}
