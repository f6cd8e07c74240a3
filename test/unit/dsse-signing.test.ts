// Edge package signing (api/edge-packages/signing.ts) without a server: DSSE v1's pre-authentication encoding, and an
// Ed25519 envelope any DSSE verifier checks with the key's public half. Signed packages end to end are
// test/edge-packages/build.test.ts.
import { describe, expect, test } from 'bun:test'
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto'
import { dssePae, dsseSign, keyIdOf } from '../../api/edge-packages/signing'

describe('DSSE', () => {
  test("the pre-authentication encoding is the spec's: lengths in bytes, of the UTF-8 type and of the payload", () => {
    expect(dssePae('application/vnd.in-toto+json', Buffer.from('{"a":1}')).toString()).toBe('DSSEv1 28 application/vnd.in-toto+json 7 {"a":1}')
    expect(dssePae('t/é', Buffer.from('ü')).toString()).toBe('DSSEv1 4 t/é 2 ü')
    expect(dssePae('x', Buffer.alloc(0)).toString()).toBe('DSSEv1 1 x 0 ')
  })

  test('an envelope verifies over its encoding with the public key, never as another payload type; the same input signs the same', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    const payload = Buffer.from('{"package":"p1"}')
    const env = dsseSign(privateKey, 'application/vnd.rcp.manifest+json', payload)
    expect(Buffer.from(env.payload, 'base64')).toEqual(payload)
    const sig = Buffer.from(env.signatures[0]!.sig, 'base64')
    expect(verify(null, dssePae(env.payloadType, payload), publicKey, sig)).toBe(true)
    expect(verify(null, dssePae('application/json', payload), publicKey, sig)).toBe(false)
    expect(verify(null, payload, publicKey, sig)).toBe(false)
    const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32)
    expect(env.signatures[0]!.keyid).toBe(keyIdOf(raw))
    expect(dsseSign(privateKey, env.payloadType, payload)).toEqual(env)
  })
})
