import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url')
export const sha256 = (value: string | Uint8Array): Buffer => createHash('sha256').update(value).digest()
export const sha256Hex = (value: string | Uint8Array): string => createHash('sha256').update(value).digest('hex')

export const hmac = (key: Uint8Array, value: string): Buffer => createHmac('sha256', key).update(value).digest()

export function safeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Key material derived per purpose, so the one SECRET_KEY never signs two kinds of thing with the same key. */
export function deriveKey(secretKeyBase64: string, purpose: string): Buffer {
  return hmac(Buffer.from(secretKeyBase64, 'base64'), `rcp:${purpose}`)
}

/** The key that seals secrets at rest. The API seals and the worker opens (mail data), so both must derive
 *  it from here: a purpose string spelt differently in one of them would make every sealed row unreadable. */
export const secretsAtRestKey = (secretKeyBase64: string): Buffer => deriveKey(secretKeyBase64, 'secrets-at-rest')

// AES-256-GCM for secrets that must be used again (TOTP seeds, SSO client secrets, webhook secrets).
// Layout: version byte | 12-byte IV | 16-byte tag | ciphertext.
export function encryptSecret(key: Buffer, plaintext: string): Buffer {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), body])
}

export function decryptSecret(key: Buffer, sealed: Uint8Array): string {
  const buf = Buffer.from(sealed)
  if (buf[0] !== 1) throw new Error('unknown sealed-secret version')
  const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(1, 13))
  decipher.setAuthTag(buf.subarray(13, 29))
  return Buffer.concat([decipher.update(buf.subarray(29)), decipher.final()]).toString('utf8')
}
