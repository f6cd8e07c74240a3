// The platform's package signing key (Ed25519). Production configures PACKAGE_SIGNING_KEY (PKCS#8 PEM); without
// it the key is derived from SECRET_KEY, so development and tests sign without any setup and every process of one
// deployment (API publishing the public key, worker signing) agrees on it. Previous public keys stay listed after
// a rotation, so packages signed before it still verify.
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto'
import type { Config } from '../platform/config'
import { deriveKey } from '../platform/crypto'
import { secretKeyList } from '../platform/keyring'

type SigningConfig = Pick<Config, 'SECRET_KEY' | 'PACKAGE_SIGNING_KEY' | 'PACKAGE_SIGNING_PREVIOUS_PUBLIC_KEYS'>

// DER prefixes of an Ed25519 PKCS#8 private key and SPKI public key; the 32 key bytes follow.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex')

export interface PublicSigningKey {
  keyId: string
  algorithm: 'ed25519'
  publicKeyPem: string
  publicKeyBase64: string
  current: boolean
}

/** Hex SHA-256 of the raw 32-byte public key, first 16 characters: short enough to read, unique among a
 *  deployment's handful of keys. */
export const keyIdOf = (raw: Buffer) => createHash('sha256').update(raw).digest('hex').slice(0, 16)

const rawOf = (key: KeyObject) => (key.export({ format: 'der', type: 'spki' }) as Buffer).subarray(SPKI_ED25519.length)

function describe(key: KeyObject, current: boolean): PublicSigningKey {
  const raw = rawOf(key)
  return {
    keyId: keyIdOf(raw),
    algorithm: 'ed25519',
    publicKeyPem: key.export({ format: 'pem', type: 'spki' }) as string,
    publicKeyBase64: raw.toString('base64'),
    current,
  }
}

export function signingPrivateKey(config: SigningConfig): KeyObject {
  if (config.PACKAGE_SIGNING_KEY) return createPrivateKey(config.PACKAGE_SIGNING_KEY)
  return derivedSigningKey(secretKeyList(config.SECRET_KEY)[0]!)
}

const derivedSigningKey = (secretKey: string) =>
  createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, deriveKey(secretKey, 'package-signing')]), format: 'der', type: 'pkcs8' })

/** The current key and, for rotation, the previous public keys (PEM blocks or raw base64, comma-separated). */
export function publicSigningKeys(config: SigningConfig): PublicSigningKey[] {
  const current = describe(createPublicKey(signingPrivateKey(config)), true)
  // Without PACKAGE_SIGNING_KEY, the earlier keys of SECRET_KEY's ring derived earlier signing keys: still listed.
  const derived = config.PACKAGE_SIGNING_KEY
    ? []
    : secretKeyList(config.SECRET_KEY)
        .slice(1)
        .map((k) => createPublicKey(derivedSigningKey(k)))
  const previous = [...derived, ...previousKeys(config.PACKAGE_SIGNING_PREVIOUS_PUBLIC_KEYS)].map((k) => describe(k, false))
  return [current, ...previous.filter((k) => k.keyId !== current.keyId)]
}

function previousKeys(value: string): KeyObject[] {
  const pems = value.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? []
  const raws = value
    .replace(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  return [
    ...pems.map((pem) => createPublicKey(pem)),
    ...raws.map((b64) => createPublicKey({ key: Buffer.concat([SPKI_ED25519, Buffer.from(b64, 'base64')]), format: 'der', type: 'spki' })),
  ]
}

/** DSSE v1 pre-authentication encoding: what is signed, so a signature over one payload type never verifies
 *  as another. */
export function dssePae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8')
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload])
}

export interface DsseEnvelope {
  payloadType: string
  payload: string
  signatures: { keyid: string; sig: string }[]
}

/** Ed25519 is deterministic (RFC 8032), so the same payload and key give the same envelope bytes. */
export function dsseSign(key: KeyObject, payloadType: string, payload: Buffer): DsseEnvelope {
  const keyid = keyIdOf(rawOf(createPublicKey(key)))
  const sig = sign(null, dssePae(payloadType, payload), key).toString('base64')
  return { payloadType, payload: payload.toString('base64'), signatures: [{ keyid, sig }] }
}
