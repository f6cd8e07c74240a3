import { staleVersion } from '../platform/etag'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { checkUrl, OutboundRefused } from '../platform/outbound/guard'
import { outboundPolicyOf } from '../platform/outbound/policy'
import { parseIp } from '../platform/outbound/addresses'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { currentMembership, type Principal } from '../identity/service'
import type { CreateWebhookEndpoint, UpdateWebhookEndpoint } from './model'
import { deleteEndpoint, findEndpoint, insertEndpoint, listEndpoints, rotateEndpointSecret, updateEndpoint, type WebhookEndpointRow } from './queries'
import { newSigningSecret, sealSecret } from './secrets'

export const toWebhookEndpointDto = (r: WebhookEndpointRow) => ({
  id: r.id, tenantId: r.tenant_id, url: r.url, events: r.events, description: r.description, enabled: r.enabled,
  disabledReason: r.disabled_reason, disabledAt: r.disabled_at?.toISOString() ?? null, rateLimitPerSecond: r.rate_limit_per_second,
  previousSecretExpiresAt: r.previous_secret_expires_at && r.previous_secret_expires_at > new Date() ? r.previous_secret_expires_at.toISOString() : null,
  createdAt: r.created_at.toISOString(), updatedAt: r.updated_at.toISOString(),
})

const urlRefused = (message: string) => new ApiError('VALIDATION_ERROR', `url is not a destination we deliver to: ${message}`, { errors: [{ path: 'body.url', message }] })

/** The outbound guard's registration-time check. A refusal names the reason class only for a literal address (the
 *  caller typed it); for a name it says no more than "not public", so the API never tells a tenant what our DNS
 *  answers for internal names. Deliveries check again at every attempt (DNS may change). */
async function requirePublicUrl(config: ServiceDeps['config'], url: string): Promise<void> {
  try {
    await checkUrl(url, outboundPolicyOf(config))
  } catch (err) {
    if (!(err instanceof OutboundRefused)) throw err
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
    if (err.reason === 'unresolvable') throw urlRefused('its host does not resolve')
    if (err.reason === 'userinfo') throw urlRefused('credentials in the URL are not accepted')
    if (err.reason === 'invalid-url' || err.reason === 'scheme') throw urlRefused('must be an absolute https:// URL')
    throw urlRefused(parseIp(host) ? `the address is ${err.reason}, not a public one` : 'its host must resolve to public addresses only')
  }
}

const folded = (events: string[]) => [...new Set(events)]

/** Registers an endpoint and answers its signing secret: this response is the only place it ever appears. */
export async function createEndpoint({ sql, keys, config }: Pick<ServiceDeps, 'sql' | 'keys' | 'config'>, principal: Principal, input: CreateWebhookEndpoint) {
  const { tenantId } = currentMembership(principal)
  await requirePublicUrl(config, input.url)
  const secret = newSigningSecret()
  const row = await insertEndpoint(sql, {
    tenantId, url: input.url, events: folded(input.events), description: input.description || null,
    rateLimitPerSecond: input.rateLimitPerSecond ?? null, secretSealed: sealSecret(keys, secret),
  })
  return { row, secret }
}

export async function listWebhookEndpoints({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, principal: Principal, q: PageParams & { enabled?: 'true' | 'false' }) {
  const { tenantId } = currentMembership(principal)
  const enabled = q.enabled === undefined ? undefined : q.enabled === 'true'
  const binding = { route: 'GET /webhook-endpoints', scope: `tenant:${tenantId}`, filters: { enabled } }
  const p = await paginate(keys.page, binding, q, (after, limit) => listEndpoints(sql, tenantId, enabled, after, limit), createdCursorOf)
  return mapPage(p, toWebhookEndpointDto)
}

const notFound = () => new ApiError('NOT_FOUND', 'No webhook endpoint with this id in the current tenant')

export async function getEndpoint({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string) {
  const row = isUuid(id) ? await findEndpoint(sql, currentMembership(principal).tenantId, id) : undefined
  if (!row) throw notFound()
  return row
}

export async function changeEndpoint(deps: Pick<ServiceDeps, 'sql' | 'config'>, principal: Principal, id: string, expectedVersion: number | null, input: UpdateWebhookEndpoint) {
  const { tenantId } = currentMembership(principal)
  await getEndpoint(deps, principal, id)
  if (input.url !== undefined) await requirePublicUrl(deps.config, input.url)
  const row = await updateEndpoint(deps.sql, tenantId, id, expectedVersion, {
    ...input, events: input.events && folded(input.events), description: input.description === undefined ? undefined : input.description || null,
  })
  if (!row) throw staleVersion('endpoint')
  return row
}

export async function removeEndpoint({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string, expectedVersion: number | null) {
  await getEndpoint({ sql }, principal, id)
  if (!(await deleteEndpoint(sql, currentMembership(principal).tenantId, id, expectedVersion))) throw staleVersion('endpoint')
  return { removed: true as const }
}

/** A new secret, answered once; the one it replaces keeps signing beside it for WEBHOOK_SECRET_OVERLAP_SECONDS, so
 *  receivers can switch without missing a delivery. */
export async function rotateSecret({ sql, keys, config }: Pick<ServiceDeps, 'sql' | 'keys' | 'config'>, principal: Principal, id: string) {
  await getEndpoint({ sql }, principal, id)
  const secret = newSigningSecret()
  const row = await rotateEndpointSecret(sql, currentMembership(principal).tenantId, id, sealSecret(keys, secret), config.WEBHOOK_SECRET_OVERLAP_SECONDS)
  if (!row) throw notFound()
  return { row, secret }
}

// What the delivery side (api/webhook-deliveries) reads and calls: stable names.
export { endpointsForEvent, findEndpoint, type WebhookEndpointRow } from './queries'
export { disableEndpoint, signingSecrets } from './secrets'
