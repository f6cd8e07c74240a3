import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { requireActiveMembership, requirePermission, type Principal } from '../identity/service'
import { countUserMemberships, insertMembership } from '../memberships/queries'
import { setSessionMembership } from '../sessions/queries'
import { insertTenant } from './queries'

/** A user with no membership may create their first tenant; anyone else needs tenant:manage where they are.
 *  The tenant, the owner membership and the session switch commit together. */
export async function createTenant({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, input: { name: string; slug: string }, tenantHeader: string | undefined) {
  if ((await countUserMemberships(sql, principal.userId)) > 0) {
    requireActiveMembership(principal, tenantHeader)
    requirePermission(principal, ['tenant:manage'])
  }
  return sql.begin(async (tx) => {
    const tenant = await insertTenant(tx, input)
    if (!tenant) throw new ApiError('TENANT_SLUG_CONFLICT', `The slug "${input.slug}" is taken`)
    const membership = await insertMembership(tx, { tenantId: tenant.id, userId: principal.userId, role: 'owner' })
    if (principal.credential === 'session') await setSessionMembership(tx, principal.credentialId, principal.userId, membership.id)
    return { tenant, membership }
  })
}
