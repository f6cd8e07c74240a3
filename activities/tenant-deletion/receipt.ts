// The deletion receipt: what was deleted, proof that nothing of the tenant remains, and when the last backup holding
// it expires, signed as a DSSE envelope with the platform's signing key (the one edge packages are signed with, so
// GET /v1/edge-inference-packages/signing-keys verifies both). It is kept in the job row and in the tenant.deleted audit entry.
import { createHash, createPublicKey, verify } from 'node:crypto'
import type { Config } from '../../api/platform/config'
import { dssePae, dsseSign, publicSigningKeys, signingPrivateKey, type DsseEnvelope } from '../../api/edge-packages/signing'

export const RECEIPT_PAYLOAD_TYPE = 'application/vnd.rcp.tenant-deletion-receipt+json'

export interface DeletionReceipt {
  version: 1
  tenantId: string
  jobId: string
  requestedAt: string
  completedAt: string
  credentials: {
    sessionsRevoked: number
    apiKeysRevoked: number
    ssoConnectionsDisabled: number
    webhookEndpointsDisabled: number
    finalEventId: string | null
  }
  /** Every table with a tenant_id column that the deletion empties: rows deleted, and rows of the tenant left (0). */
  tables: { table: string; rowsDeleted: number; remaining: number }[]
  /** Tables kept on purpose, with why. */
  retained: { table: string; reason: string }[]
  /** Every bucket kind: object versions deleted and whether the bucket still exists (false). */
  buckets: { kind: string; bucket: string | null; objectsDeleted: number; exists: boolean }[]
  backups: { retentionDays: number; lastBackupExpiresAt: string }
}

type SigningConfig = Pick<Config, 'SECRET_KEY' | 'PACKAGE_SIGNING_KEY' | 'PACKAGE_SIGNING_PREVIOUS_PUBLIC_KEYS'>

/** Any backup taken while the tenant's data existed was taken before `completedAt`; the last of them is deleted
 *  BACKUP_RETENTION_DAYS after it was taken, so by completedAt + that period every copy is gone. */
export const lastBackupExpiry = (completedAt: Date, retentionDays: number) => new Date(completedAt.getTime() + retentionDays * 86_400_000)

export function signReceipt(config: SigningConfig, receipt: DeletionReceipt): { envelope: DsseEnvelope; sha256: string } {
  const payload = Buffer.from(JSON.stringify(receipt))
  return { envelope: dsseSign(signingPrivateKey(config), RECEIPT_PAYLOAD_TYPE, payload), sha256: createHash('sha256').update(payload).digest('hex') }
}

/** The receipt, when the envelope is a receipt signed by one of the deployment's keys (current or previous). */
export function verifyReceipt(config: SigningConfig, envelope: DsseEnvelope): DeletionReceipt | null {
  if (envelope.payloadType !== RECEIPT_PAYLOAD_TYPE) return null
  const payload = Buffer.from(envelope.payload, 'base64')
  const keys = publicSigningKeys(config)
  const signed = envelope.signatures.some((s) => {
    const key = keys.find((k) => k.keyId === s.keyid)
    return key !== undefined && verify(null, dssePae(envelope.payloadType, payload), createPublicKey(key.publicKeyPem), Buffer.from(s.sig, 'base64'))
  })
  return signed ? (JSON.parse(payload.toString('utf8')) as DeletionReceipt) : null
}
