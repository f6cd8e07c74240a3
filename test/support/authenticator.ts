// A software passkey for API-level tests: ES256, "none" attestation, discoverable, with user presence and
// verification flags under the test's control. The browser test covers the real ceremony; this one lets tests
// forge what a real authenticator would never send (a counter that goes back, no user verification).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { isoCBOR } from '@simplewebauthn/server/helpers'

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url')
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest()

const UP = 0x01
const UV = 0x04
const AT = 0x40

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16)
  private readonly privateKey: KeyObject
  private readonly cose: Uint8Array
  signCount = 0
  userHandle: string | undefined

  constructor(
    readonly origin: string,
    readonly rpId = 'localhost',
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    this.privateKey = privateKey
    const jwk = publicKey.export({ format: 'jwk' })
    this.cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    )
  }

  get id() {
    return b64url(this.credentialId)
  }

  private authData(flags: number, attested: boolean): Buffer {
    const count = Buffer.alloc(4)
    count.writeUInt32BE(this.signCount)
    const parts = [sha256(this.rpId), Buffer.from([flags | (attested ? AT : 0)]), count]
    if (attested) {
      const len = Buffer.alloc(2)
      len.writeUInt16BE(this.credentialId.length)
      parts.push(Buffer.alloc(16), len, this.credentialId, Buffer.from(this.cose))
    }
    return Buffer.concat(parts)
  }

  private clientData(type: string, challenge: string, origin = this.origin) {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
  }

  /** The RegistrationResponseJSON for creation options as the API answered them. */
  register(options: { challenge: string; user: { id: string } }, o: { uv?: boolean } = {}) {
    this.userHandle = options.user.id
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', this.authData(UP | (o.uv === false ? 0 : UV), true)],
      ]) as never,
    )
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    }
  }

  /** The AuthenticationResponseJSON for request options; the counter moves forward unless told otherwise. */
  assert(challenge: string, o: { uv?: boolean; counter?: number; origin?: string } = {}) {
    this.signCount = o.counter ?? this.signCount + 1
    const authData = this.authData(UP | (o.uv === false ? 0 : UV), false)
    const clientDataJSON = this.clientData('webauthn.get', challenge, o.origin)
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), { key: this.privateKey, dsaEncoding: 'der' })
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
    }
  }
}
