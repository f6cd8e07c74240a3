import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { isUuid } from '../platform/ids'
import { tenantOf, type RequestContext } from '../identity/context'
import { currentPermissions, requirePermission, type Principal } from '../identity/service'
import { PERMISSION_CATALOGUE, type Permission } from '../identity/permissions'
import { recordAudit } from '../audit/service'
import { newPat } from '../identity/tokens'
import { PAT_DEFAULT_DAYS, PAT_MAX_DAYS } from './model'
import { findApiKey, insertApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from './queries'

const DAY = 86_400_000

export const toApiKeySummary = (r: ApiKeyRow) => ({
  id: r.id,
  name: r.name,
  prefix: r.display_prefix,
  tenantId: r.tenant_id,
  userId: r.user_id,
  membershipId: r.membership_id,
  scopes: r.scopes,
  projectId: r.project_id,
  createdAt: r.created_at.toISOString(),
  expiresAt: r.expires_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
})

/** A PAT minted by a PAT never outlives it (a stolen token cannot renew itself): an explicit later expiry is
 *  refused, the default is cut to the parent's. */
function patExpiry(principal: Principal, asked: string | undefined): Date {
  const now = Date.now()
  const parent = principal.credential === 'personal_access_token' ? principal.expiresAt.getTime() : Infinity
  const expiresAt = asked ? new Date(asked) : new Date(Math.min(now + PAT_DEFAULT_DAYS * DAY, parent))
  if (expiresAt.getTime() <= now || expiresAt.getTime() > now + PAT_MAX_DAYS * DAY) {
    throw new ApiError('VALIDATION_ERROR', `expiresAt must be in the future and at most ${PAT_MAX_DAYS} days away`, {
      errors: [{ path: 'body.expiresAt', message: `must be within ${PAT_MAX_DAYS} days from now` }],
    })
  }
  if (expiresAt.getTime() > parent) {
    throw new ApiError('VALIDATION_ERROR', 'A token created with a token cannot expire after it', {
      errors: [{ path: 'body.expiresAt', message: `must be at most ${principal.expiresAt.toISOString()}, when the token making it expires` }],
    })
  }
  return expiresAt
}

/** What the caller holds in the project a new token is for (api/project-members standingIn, read by the route):
 *  undefined when the tenant has no such project. */
export type ProjectStanding = { projectId: string; held: readonly Permission[] } | undefined

/** A PAT is bound to the caller's current membership; its scopes may not exceed what the caller holds now: in the
 *  tenant, or for a project token (`input.projectId`), in that project, where only project-scope points mean
 *  anything. */
export async function createApiKey(
  { sql }: Pick<ServiceDeps, 'sql'>,
  ctx: RequestContext,
  input: { name: string; scopes: string[]; expiresAt?: string; projectId?: string },
  project?: ProjectStanding,
) {
  const { principal } = ctx
  const membership = tenantOf(ctx)
  if (input.projectId !== undefined && project?.projectId !== input.projectId) {
    throw new ApiError('VALIDATION_ERROR', 'No project with this id in the current tenant', {
      errors: [{ path: 'body.projectId', message: 'not a project of the current tenant' }],
    })
  }
  if (project) {
    const tenantWide = input.scopes.filter((s) => PERMISSION_CATALOGUE[s as Permission]?.scope !== 'project')
    if (tenantWide.length > 0) {
      throw new ApiError('INVALID_PERMISSION_OVERLAY', `A project token's scopes are project-scope points; not: ${tenantWide.join(', ')}`)
    }
  }
  const ceiling = project ? project.held : principal.permissions
  const beyond = input.scopes.filter((s) => !ceiling.includes(s as never))
  if (beyond.length > 0) {
    const where = project ? ' in this project' : ''
    throw new ApiError('INVALID_PERMISSION_OVERLAY', `Scopes exceed your own permissions${where}: ${beyond.join(', ')}`)
  }
  const expiresAt = patExpiry(principal, input.expiresAt)
  const { token, hash, displayPrefix } = newPat()
  const row = await sql.begin(async (tx) => {
    const key = await insertApiKey(tx, {
      tenantId: membership.tenantId,
      userId: principal.userId,
      membershipId: membership.id,
      name: input.name,
      tokenHash: hash,
      displayPrefix,
      scopes: [...new Set(input.scopes)],
      projectId: project?.projectId ?? null,
      expiresAt,
    })
    await recordAudit(tx, ctx, {
      action: 'api_key.created',
      tenantId: key.tenant_id,
      subjectUserId: key.user_id,
      target: { type: 'api_key', id: key.id },
      details: { name: key.name, scopes: key.scopes, expiresAt: key.expires_at.toISOString(), projectId: key.project_id },
    })
    return key
  })
  return { apiKey: toApiKeySummary(row), token }
}

export const describeCredential = ({ principal: p }: RequestContext) => ({
  tenantId: p.membership?.tenantId ?? null,
  userId: p.userId,
  credentialClass: p.credential,
  credentialId: p.credentialId,
  grantCeiling: p.grantCeiling,
  effectivePermissions: currentPermissions(p),
  projectScope: p.project ? { projectId: p.project.id, membershipExpiresAt: p.project.expiresAt?.toISOString() ?? null } : null,
  expiresAt: p.expiresAt.toISOString(),
  lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
})

const keyNotFound = () => new ApiError('NOT_FOUND', 'No API key with this id in the current tenant')

/** Revoked and expired keys stay listed (with revokedAt / expiresAt) so administrators can audit them. */
export async function listKeys({ sql: db, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, q: PageParams & { scope: 'self' | 'tenant' }) {
  const { principal } = ctx
  const membership = tenantOf(ctx)
  if (q.scope === 'tenant') requirePermission(principal, ['apikey:manage'])
  const scope = q.scope === 'tenant' ? `tenant:${membership.tenantId}` : `tenant:${membership.tenantId}:user:${principal.userId}`
  const binding = { route: 'GET /api-keys', scope, filters: { scope: q.scope } }
  const filter = { tenantId: membership.tenantId, userId: q.scope === 'self' ? principal.userId : undefined }
  const p = await paginate(keys, binding, q, (after, limit) => listApiKeys(db, filter, after, limit), createdCursorOf)
  return mapPage(p, toApiKeySummary)
}

/** Your own key with apikey:write; anyone's in the tenant with apikey:manage. Others' keys are 404 without it, so
 *  ids cannot be probed. Revoking twice answers the same summary. Takes effect on the key's very next use. */
export async function revokeKey({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, apiKeyId: string) {
  const { principal } = ctx
  const membership = tenantOf(ctx)
  const key = isUuid(apiKeyId) ? await findApiKey(sql, membership.tenantId, apiKeyId) : undefined
  if (!key || (key.user_id !== principal.userId && !principal.permissions.includes('apikey:manage'))) throw keyNotFound()
  if (key.revoked_at) return toApiKeySummary(key) // revoking twice answers the same summary and records nothing new
  return sql.begin(async (tx) => {
    const revoked = (await revokeApiKey(tx, membership.tenantId, apiKeyId))!
    await recordAudit(tx, ctx, {
      action: key.user_id === principal.userId ? 'api_key.revoked' : 'api_key.revoked_by_admin',
      tenantId: membership.tenantId,
      subjectUserId: key.user_id,
      target: { type: 'api_key', id: key.id },
      details: { name: key.name },
    })
    return toApiKeySummary(revoked)
  })
}
