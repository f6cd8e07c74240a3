import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

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
