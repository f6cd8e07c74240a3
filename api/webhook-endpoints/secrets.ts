// Signing secrets and the two operations the delivery side needs beyond reading rows: which secrets sign a
// message now, and taking an endpoint out of service.
import { randomBytes } from 'node:crypto'
import { recordAudit } from '../audit/service'
import { publishEvent } from '../events/service'
import type { ActivityContext } from '../identity/context'
import { open, seal } from '../platform/keyring'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { markEndpointDisabled, type WebhookEndpointRow } from './queries'

/** Standard Webhooks format: `whsec_` + base64 of the key bytes (32 random bytes, 256 bits, as HMAC-SHA256 wants). */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

export const sealSecret = (keys: ServiceDeps['keys'], secret: string): Buffer => seal(keys, 'secrets', secret)

/** The raw secrets (`whsec_…`) a delivery is signed with at `now`: the current one first, then the one before the
 *  last rotation while its overlap lasts. Each yields one `v1,` signature, so receivers on either secret verify. */
export function signingSecrets(
  deps: Pick<ServiceDeps, 'keys'>,
  row: Pick<WebhookEndpointRow, 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>,
  now: Date,
): string[] {
  const current = open(deps.keys, 'secrets', row.secret_sealed)
  const previousLive = row.previous_secret_sealed && row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > now.getTime()
  return previousLive ? [current, open(deps.keys, 'secrets', row.previous_secret_sealed!)] : [current]
}

/** Takes an enabled endpoint out of service for a delivery reason (410 Gone, or failing too long), announces it
 *  with `webhook_endpoint.disabled` and records it as the delivering workflow's act, in the caller's transaction.
 *  Its own delivery goes to the tenant's other endpoints only, since this one is no longer enabled. An endpoint
 *  already disabled is left as it is and nothing is published or recorded (undefined). */
export async function disableEndpoint(
  tx: Db,
  ctx: ActivityContext,
  tenantId: string,
  id: string,
  reason: 'gone' | 'failing',
): Promise<WebhookEndpointRow | undefined> {
  const row = await markEndpointDisabled(tx, tenantId, id, reason)
  if (!row) return undefined
  await publishEvent(tx, tenantId, 'webhook_endpoint.disabled', { endpointId: row.id, url: row.url, reason, disabledAt: row.disabled_at!.toISOString() })
  await recordAudit(tx, ctx, {
    action: 'webhook_endpoint.disabled',
    tenantId,
    target: { type: 'webhook_endpoint', id: row.id },
    details: { reason, url: row.url },
  })
  return row
}
