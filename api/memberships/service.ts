import { staleVersion } from '../platform/etag'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { mapPage, paginate } from '../platform/pagination'
import { isUuid } from '../platform/ids'
import { effectivePermissions, type Permission } from '../identity/permissions'
import { tenantOf, type RequestContext } from '../identity/context'
import { requireRoleWithinReach, type Principal } from '../identity/service'
import { changesBetween, recordAudit } from '../audit/service'
import { revokeMembershipApiKeys } from '../api-keys/queries'
import { detachMembershipSessions } from '../sessions/queries'
import type { ListMembershipsQuery, UpdateMembershipBody } from './model'
import {
  FEW_MATCHES,
  countMembers,
  countOtherLastingOwners,
  findMember,
  listMembers,
  lockTenantMemberships,
  markMemberRemoved,
  updateMember,
  type MemberCursor,
  type MemberRow,
} from './queries'

export const toMembershipDto = (m: MemberRow) => ({
  id: m.id,
  tenantId: m.tenant_id,
  userId: m.user_id,
  email: m.email,
  displayName: m.display_name,
  role: m.role,
  status: m.status,
  expiresAt: m.expires_at?.toISOString() ?? null,
  createdAt: m.created_at.toISOString(),
  updatedAt: m.updated_at.toISOString(),
})

/** One page of the current tenant's memberships and the total count of the whole query. The page token is bound
 *  to the tenant and to every filter and sort, so it cannot be replayed against another query. */
export async function listMemberships({ sql: db, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, query: ListMembershipsQuery) {
  const { tenantId } = tenantOf(ctx)
  const { pageSize, pageToken, ...rest } = query
  const sortBy = rest.sortBy ?? 'createdAt'
  const desc = rest.sortOrder === 'desc'
  const binding = { route: 'GET /tenants/current/memberships', scope: `tenant:${tenantId}`, filters: { ...rest, sortBy, sortOrder: desc ? 'desc' : 'asc' } }
  const filter = { tenantId, status: rest.status, role: rest.role, q: rest.q }
  const count = countMembers(db, filter)
  // A search waits for its count to choose how to find its page (queries.ts FEW_MATCHES); other filters do not.
  const collectMatches = filter.q !== undefined && (await count) <= FEW_MATCHES
  const fetch = (after: MemberCursor | null, limit: number) => listMembers(db, filter, { sortBy, desc, after, limit, collectMatches })
  const [p, totalCount] = await Promise.all([paginate(keys, binding, { pageSize, pageToken }, fetch, (r) => ({ k: r.sort_key, id: r.id })), count])
  return { ...mapPage(p, toMembershipDto), totalCount }
}

const notFound = () => new ApiError('NOT_FOUND', 'No membership with this id in the current tenant')

export async function getMembership({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, membershipId: string): Promise<MemberRow> {
  const row = isUuid(membershipId) ? await findMember(sql, tenantOf(ctx).tenantId, membershipId) : undefined
  if (!row) throw notFound()
  return row
}
const isActiveOwner = (m: MemberRow) => m.role === 'owner' && m.status === 'active'

/** The role model (docs/api.md "Membership changes"): the role ceiling applies to the target's role and to the new one
 *  (changing a member above you is granting their role as much as taking it away); a removed membership is final
 *  (the person comes back through a new invitation). */
function checkTransition(principal: Principal, held: Permission[], target: MemberRow, change: UpdateMembershipBody | 'remove'): void {
  if (target.status === 'removed') {
    throw new ApiError('INVALID_ROLE_TRANSITION', 'This membership was removed; invite the person again instead')
  }
  requireRoleWithinReach(principal, target.role, held)
  if (change !== 'remove' && change.role !== undefined) requireRoleWithinReach(principal, change.role, held)
}

/** Would the change leave the tenant without an active owner? Demoting, disabling, expiring and removing count. */
function reducesOwners(target: MemberRow, change: UpdateMembershipBody | 'remove'): boolean {
  if (!isActiveOwner(target)) return false
  if (change === 'remove') return true
  return (change.role !== undefined && change.role !== 'owner') || change.status === 'disabled' || (change.expiresAt !== undefined && change.expiresAt !== null)
}

/** Loads the target under the tenant's membership lock and applies the model and the last-owner rule. */
async function guardedChange(tx: Db, ctx: RequestContext, membershipId: string, expectedVersion: number | null, change: UpdateMembershipBody | 'remove') {
  const { principal } = ctx
  const actor = tenantOf(ctx)
  if (!isUuid(membershipId)) throw notFound()
  await lockTenantMemberships(tx, actor.tenantId)
  // The principal was resolved before the lock: another change may have demoted the caller meanwhile.
  const me = await findMember(tx, actor.tenantId, actor.id)
  if (me?.status !== 'active') throw new ApiError('MEMBERSHIP_NOT_FOUND', 'Your membership in this tenant changed; it no longer allows this')
  const held = effectivePermissions(me.role, principal.grantCeiling)
  if (!held.includes('tenant:manage')) throw new ApiError('PERMISSION_DENIED', 'This operation requires tenant:manage')
  const target = await findMember(tx, actor.tenantId, membershipId)
  if (!target) throw notFound()
  if (expectedVersion !== null && target.version !== expectedVersion) throw staleVersion()
  checkTransition(principal, held, target, change)
  if (reducesOwners(target, change) && (await countOtherLastingOwners(tx, actor.tenantId, target.id)) === 0) {
    throw new ApiError('LAST_OWNER_PROTECTION', 'This is the last active owner of the tenant: make someone else owner first')
  }
  return { tenantId: actor.tenantId, target }
}

/** What membership.updated compares, in the form the API shows it. */
const auditedFields = (m: MemberRow) => ({ role: m.role, status: m.status, expiresAt: m.expires_at?.toISOString() ?? null })

export async function updateMembership(
  { sql }: Pick<ServiceDeps, 'sql'>,
  ctx: RequestContext,
  membershipId: string,
  expectedVersion: number | null,
  body: UpdateMembershipBody,
) {
  return sql.begin(async (tx) => {
    const { tenantId, target } = await guardedChange(tx, ctx, membershipId, expectedVersion, body)
    const expiresAt = body.expiresAt === undefined ? undefined : body.expiresAt === null ? null : new Date(body.expiresAt)
    if (!(await updateMember(tx, tenantId, membershipId, expectedVersion, { role: body.role, status: body.status, expiresAt }))) throw staleVersion()
    const updated = (await findMember(tx, tenantId, membershipId))!
    const changes = changesBetween(auditedFields(target), auditedFields(updated), ['role', 'status', 'expiresAt'])
    // A PATCH that restates the current values changes nothing worth an entry.
    if (changes) {
      await recordAudit(tx, ctx, {
        action: 'membership.updated',
        tenantId,
        subjectUserId: target.user_id,
        target: { type: 'membership', id: target.id },
        changes,
      })
    }
    return updated
  })
}

/** Removal, its sessions leaving the tenant and the revocation of its PATs commit together. */
export async function removeMembership({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, membershipId: string, expectedVersion: number | null) {
  return sql.begin(async (tx) => {
    const { tenantId, target } = await guardedChange(tx, ctx, membershipId, expectedVersion, 'remove')
    if (!(await markMemberRemoved(tx, tenantId, membershipId, expectedVersion))) throw staleVersion()
    await detachMembershipSessions(tx, membershipId)
    const revokedKeys = await revokeMembershipApiKeys(tx, tenantId, membershipId)
    await recordAudit(tx, ctx, {
      action: 'membership.removed',
      tenantId,
      subjectUserId: target.user_id,
      target: { type: 'membership', id: target.id },
      details: { role: target.role, revokedKeys },
    })
    return { removed: true as const }
  })
}

/** Every live token of one member, at once (the member stays). */
export async function revokeMemberKeys({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, membershipId: string) {
  const { tenantId } = tenantOf(ctx)
  const member = isUuid(membershipId) ? await findMember(sql, tenantId, membershipId) : undefined
  if (!member) throw notFound()
  return sql.begin(async (tx) => {
    const count = await revokeMembershipApiKeys(tx, tenantId, membershipId)
    await recordAudit(tx, ctx, {
      action: 'api_key.member_keys_revoked',
      tenantId,
      subjectUserId: member.user_id,
      target: { type: 'membership', id: member.id },
      details: { count },
    })
    return { membershipId, revokedCount: count }
  })
}
