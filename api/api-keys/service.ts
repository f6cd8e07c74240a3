import type { Db } from '../platform/db'
import { ApiError } from '../platform/errors'
import { requireActiveMembership, type Principal } from '../identity/service'
import { newPat } from '../identity/tokens'
import { PAT_DEFAULT_DAYS, PAT_MAX_DAYS } from './model'
import { insertApiKey, type ApiKeyRow } from './queries'

const DAY = 86_400_000

export const toApiKeySummary = (r: ApiKeyRow) => ({
  id: r.id, name: r.name, prefix: r.display_prefix, tenantId: r.tenant_id, userId: r.user_id, membershipId: r.membership_id,
  scopes: r.scopes, createdAt: r.created_at.toISOString(), expiresAt: r.expires_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null, revokedAt: r.revoked_at?.toISOString() ?? null,
})

/** A PAT is bound to the caller's current membership; its scopes may not exceed what the caller holds now. */
export async function createApiKey(db: Db, principal: Principal, input: { name: string; scopes: string[]; expiresAt?: string }) {
  const membership = requireActiveMembership(principal, undefined)
  const beyond = input.scopes.filter((s) => !principal.permissions.includes(s as never))
  if (beyond.length > 0) {
    throw new ApiError('INVALID_PERMISSION_OVERLAY', `Scopes exceed your own permissions: ${beyond.join(', ')}`)
  }
  const now = Date.now()
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : new Date(now + PAT_DEFAULT_DAYS * DAY)
  if (expiresAt.getTime() <= now || expiresAt.getTime() > now + PAT_MAX_DAYS * DAY) {
    throw new ApiError('VALIDATION_ERROR', `expiresAt must be in the future and at most ${PAT_MAX_DAYS} days away`, {
      errors: [{ path: 'body.expiresAt', message: `must be within ${PAT_MAX_DAYS} days from now` }],
    })
  }
  const { token, hash, displayPrefix } = newPat()
  const row = await insertApiKey(db, {
    tenantId: membership.tenantId, userId: principal.userId, membershipId: membership.id, name: input.name,
    tokenHash: hash, displayPrefix, scopes: [...new Set(input.scopes)], expiresAt,
  })
  return { apiKey: toApiKeySummary(row), token }
}

export const describeCredential = (p: Principal) => ({
  tenantId: p.membership?.tenantId ?? null,
  userId: p.userId,
  credentialClass: p.credential,
  credentialId: p.credentialId,
  grantCeiling: p.grantCeiling,
  effectivePermissions: p.permissions,
  projectScope: null,
  expiresAt: p.expiresAt.toISOString(),
  lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
})
