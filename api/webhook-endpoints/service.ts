import { staleVersion } from '../platform/etag'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { checkUrl, OutboundRefused } from '../platform/outbound/guard'
import { outboundPolicyOf } from '../platform/outbound/policy'
import { parseIp } from '../platform/outbound/addresses'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { changesBetween, recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import type { CreateWebhookEndpoint, UpdateWebhookEndpoint } from './model'
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  lockEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
  type WebhookEndpointRow,
} from './queries'
import { newSigningSecret, sealSecret } from './secrets'

export const toWebhookEndpointDto = (r: WebhookEndpointRow) => ({
  id: r.id,
  tenantId: r.tenant_id,
  url: r.url,
  events: r.events,
  description: r.description,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  disabledAt: r.disabled_at?.toISOString() ?? null,
  rateLimitPerSecond: r.rate_limit_per_second,
  previousSecretExpiresAt: r.previous_secret_expires_at && r.previous_secret_expires_at > new Date() ? r.previous_secret_expires_at.toISOString() : null,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
})

const urlRefused = (message: string) =>
  new ApiError('VALIDATION_ERROR', `url is not a destination we deliver to: ${message}`, { errors: [{ path: 'body.url', message }] })

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

/** What the audit trail shows of an endpoint, by its API names: never a secret (sealed or not). */
const settingsOf = (r: WebhookEndpointRow) => ({
  url: r.url,
  events: r.events,
  description: r.description,
  rateLimitPerSecond: r.rate_limit_per_second,
  enabled: r.enabled,
})
const SETTINGS = ['url', 'events', 'description', 'rateLimitPerSecond', 'enabled'] as const
const endpointTarget = (r: WebhookEndpointRow) => ({ type: 'webhook_endpoint', id: r.id })

/** Registers an endpoint and answers its signing secret: this response is the only place it ever appears. */
export async function createEndpoint({ sql, keys, config }: Pick<ServiceDeps, 'sql' | 'keys' | 'config'>, ctx: RequestContext, input: CreateWebhookEndpoint) {
  const { tenantId } = tenantOf(ctx)
  await requirePublicUrl(config, input.url)
  const secret = newSigningSecret()
  const row = await sql.begin(async (tx) => {
    const made = await insertEndpoint(tx, {
      tenantId,
      url: input.url,
      events: folded(input.events),
      description: input.description || null,
      rateLimitPerSecond: input.rateLimitPerSecond ?? null,
      secretSealed: sealSecret(keys, secret),
    })
    await recordAudit(tx, ctx, { action: 'webhook_endpoint.created', tenantId, target: endpointTarget(made), details: settingsOf(made) })
    return made
  })
  return { row, secret }
}

export async function listWebhookEndpoints(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { enabled?: 'true' | 'false' },
) {
  const { tenantId } = tenantOf(ctx)
  const enabled = q.enabled === undefined ? undefined : q.enabled === 'true'
  const binding = { route: 'GET /webhook-endpoints', scope: `tenant:${tenantId}`, filters: { enabled } }
  const p = await paginate(keys, binding, q, (after, limit) => listEndpoints(sql, tenantId, enabled, after, limit), createdCursorOf)
  return mapPage(p, toWebhookEndpointDto)
}

const notFound = () => new ApiError('NOT_FOUND', 'No webhook endpoint with this id in the current tenant')

export async function getEndpoint({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const row = isUuid(id) ? await findEndpoint(sql, tenantOf(ctx).tenantId, id) : undefined
  if (!row) throw notFound()
  return row
}

/** Recorded with what changed, before and after; a PATCH that changes nothing is not. */
export async function changeEndpoint(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  ctx: RequestContext,
  id: string,
  expectedVersion: number | null,
  input: UpdateWebhookEndpoint,
) {
  const { tenantId } = tenantOf(ctx)
  await getEndpoint(deps, ctx, id)
  if (input.url !== undefined) await requirePublicUrl(deps.config, input.url)
  return deps.sql.begin(async (tx) => {
    const before = await lockEndpoint(tx, tenantId, id)
    if (!before) throw notFound()
    const row = await updateEndpoint(tx, tenantId, id, expectedVersion, {
      ...input,
      events: input.events && folded(input.events),
      description: input.description === undefined ? undefined : input.description || null,
    })
    if (!row) throw staleVersion('endpoint')
    const changes = changesBetween(settingsOf(before), settingsOf(row), SETTINGS)
    if (changes) await recordAudit(tx, ctx, { action: 'webhook_endpoint.updated', tenantId, target: endpointTarget(row), changes })
    return row
  })
}

export async function removeEndpoint({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string, expectedVersion: number | null) {
  const row = await getEndpoint({ sql }, ctx, id)
  await sql.begin(async (tx) => {
    if (!(await deleteEndpoint(tx, row.tenant_id, id, expectedVersion))) throw staleVersion('endpoint')
    await recordAudit(tx, ctx, { action: 'webhook_endpoint.deleted', tenantId: row.tenant_id, target: endpointTarget(row), details: { url: row.url } })
  })
  return { removed: true as const }
}

/** A new secret, answered once; the one it replaces keeps signing beside it for WEBHOOK_SECRET_OVERLAP_SECONDS, so
 *  receivers can switch without missing a delivery. The entry says when the old one stops, never either secret. */
export async function rotateSecret({ sql, keys, config }: Pick<ServiceDeps, 'sql' | 'keys' | 'config'>, ctx: RequestContext, id: string) {
  const { tenant_id: tenantId } = await getEndpoint({ sql }, ctx, id)
  const secret = newSigningSecret()
  const row = await sql.begin(async (tx) => {
    const rotated = await rotateEndpointSecret(tx, tenantId, id, sealSecret(keys, secret), config.WEBHOOK_SECRET_OVERLAP_SECONDS)
    if (!rotated) throw notFound()
    await recordAudit(tx, ctx, {
      action: 'webhook_endpoint.secret_rotated',
      tenantId,
      target: endpointTarget(rotated),
      details: { previousSecretExpiresAt: rotated.previous_secret_expires_at!.toISOString() },
    })
    return rotated
  })
  return { row, secret }
}

// What the delivery side (api/webhook-deliveries) reads and calls: stable names.
export { endpointsForEvent, findEndpoint, type WebhookEndpointRow } from './queries'
export { disableEndpoint, signingSecrets } from './secrets'
