// Checking an unpacked edge package against nothing but itself and the published keys (docs/robots.md): every file
// against SHA256SUMS (and no file left out of it), the DSSE envelope's Ed25519 signature over its pre-authentication
// encoding with a key GET /v1/edge-inference-packages/signing-keys publishes, and the signed statement's subjects
// against the files' digests.
import { verify as verifySignature } from 'node:crypto'

export const SUMS = 'SHA256SUMS'
export const PROVENANCE = 'provenance.intoto.jsonl'

export interface PublishedKey {
  keyId: string
  publicKeyPem: string
}

export class VerificationError extends Error {}

interface Envelope {
  payloadType: string
  payload: string
  signatures: { keyid: string; sig: string }[]
}

/** DSSE v1 pre-authentication encoding. */
export function pae(payloadType: string, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(payloadType)} ${payloadType} ${payload.length} `), payload])
}

/** `sha256sum` lines: "<hex>  <name>" (or " *<name>", binary mode). */
export function parseSums(text: string): Map<string, string> {
  const sums = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line)
    if (!m) throw new VerificationError(`${SUMS}: a line that is not "<sha256>  <file>": ${JSON.stringify(line.slice(0, 80))}`)
    if (sums.has(m[2]!)) throw new VerificationError(`${SUMS} lists ${m[2]} twice`)
    sums.set(m[2]!, m[1]!)
  }
  return sums
}

/** Throws a VerificationError naming the first thing that does not hold; answers the key that signed. */
export function verifyPackage(
  digests: Map<string, string>,
  contents: { sums: Buffer; provenance: Buffer },
  keys: PublishedKey[],
): { keyId: string; files: number } {
  const sums = parseSums(contents.sums.toString('utf8'))
  for (const [file, digest] of sums) {
    const actual = digests.get(file)
    if (actual === undefined) throw new VerificationError(`${SUMS} lists ${file}, which the package does not hold`)
    if (actual !== digest) throw new VerificationError(`${file}: SHA-256 ${actual} is not the ${digest} ${SUMS} lists`)
  }
  for (const file of digests.keys()) if (file !== SUMS && !sums.has(file)) throw new VerificationError(`${file} is in the package but not in ${SUMS}`)
  if (!sums.has(PROVENANCE)) throw new VerificationError(`${SUMS} does not cover ${PROVENANCE}`)

  let envelope: Envelope
  try {
    envelope = JSON.parse(contents.provenance.toString('utf8')) as Envelope
  } catch {
    throw new VerificationError(`${PROVENANCE} is not a DSSE envelope`)
  }
  if (typeof envelope.payload !== 'string' || typeof envelope.payloadType !== 'string' || !Array.isArray(envelope.signatures))
    throw new VerificationError(`${PROVENANCE} is not a DSSE envelope`)
  const payload = Buffer.from(envelope.payload, 'base64')
  const signed = pae(envelope.payloadType, payload)
  const good = envelope.signatures.find((s) => {
    const key = keys.find((k) => k.keyId === s.keyid)
    return key !== undefined && verifySignature(null, signed, key.publicKeyPem, Buffer.from(s.sig, 'base64'))
  })
  if (!good) {
    const named = envelope.signatures.map((s) => s.keyid).join(', ')
    const known = envelope.signatures.some((s) => keys.some((k) => k.keyId === s.keyid))
    throw new VerificationError(
      known ? `the DSSE signature of ${PROVENANCE} does not verify with the published key` : `${PROVENANCE} is signed by ${named}, not a published key`,
    )
  }
  let statement: { subject?: { name: string; digest: { sha256: string } }[] }
  try {
    statement = JSON.parse(payload.toString('utf8'))
  } catch {
    throw new VerificationError('the signed statement is not JSON')
  }
  const subjects = statement.subject ?? []
  for (const s of subjects) {
    const actual = digests.get(s.name)
    if (actual !== s.digest?.sha256)
      throw new VerificationError(`${s.name}: the signed statement says SHA-256 ${s.digest?.sha256}, the file has ${actual ?? 'no file'}`)
  }
  const named = new Set(subjects.map((s) => s.name))
  for (const file of digests.keys())
    if (file !== SUMS && file !== PROVENANCE && !named.has(file)) throw new VerificationError(`${file} is in the package but not in the signed statement`)
  return { keyId: good.keyid, files: digests.size }
}
