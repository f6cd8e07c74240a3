import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import type { RequestContext } from '../identity/context'
import { requireActiveMembership, requirePermission } from '../identity/service'
import { recordAudit } from '../audit/service'
import { countUserMemberships, insertMembership } from '../memberships/queries'
import { moveSessionInto } from '../sign-in/policy'
import { subscribeNewTenant } from '../billing/service'
import { insertTenant } from './queries'

/** A user with no membership may create their first tenant; anyone else needs tenant:manage where they are.
 *  The tenant, the owner membership and the session switch commit together; the switch goes through the one
 *  policy rule and takes the new tenant's lifetimes like any other (a new tenant has the default policy). */
export async function createTenant(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  ctx: RequestContext,
  input: { name: string; slug: string },
  tenantHeader: string | undefined,
) {
  const { sql } = deps
  const { principal } = ctx
  if ((await countUserMemberships(sql, principal.userId)) > 0) {
    requireActiveMembership(principal, tenantHeader)
    requirePermission(principal, ['tenant:manage'])
  }
  return sql.begin(async (tx) => {
    const tenant = await insertTenant(tx, input)
    if (!tenant) throw new ApiError('TENANT_SLUG_CONFLICT', `The slug "${input.slug}" is taken`)
    const membership = await insertMembership(tx, { tenantId: tenant.id, userId: principal.userId, role: 'owner' })
    if (principal.credential === 'session') await moveSessionInto(tx, deps, principal, { id: membership.id, tenantId: tenant.id })
    await recordAudit(tx, ctx, {
      action: 'tenant.created',
      tenantId: tenant.id,
      target: { type: 'tenant', id: tenant.id },
      details: { name: tenant.name, slug: tenant.slug },
    })
    await subscribeNewTenant(tx, deps.config, ctx, tenant.id)
    return { tenant, membership }
  })
}
