import { allowsPassword, getAuthPolicy } from '../auth-policy/service'
import type { Config } from '../platform/config'
import type { Db } from '../platform/db'
import type { MembershipViewRow } from '../users/queries'
import { tenantOfMembership } from './queries'

/** A session's lifetimes: its tenant's auth policy, or the configured defaults without a tenant. */
export async function sessionLifetimes(db: Db, config: Config, membershipId: string | null): Promise<{ absoluteSeconds: number; idleSeconds: number }> {
  const tenantId = membershipId ? await tenantOfMembership(db, membershipId) : undefined
  if (!tenantId) return { absoluteSeconds: config.SESSION_ABSOLUTE_HOURS * 3600, idleSeconds: config.SESSION_IDLE_MINUTES * 60 }
  const { policy } = await getAuthPolicy(db, tenantId, config)
  return { absoluteSeconds: policy.sessionAbsoluteMinutes * 60, idleSeconds: policy.sessionIdleMinutes * 60 }
}

/** Where a password sign-in lands: the first active membership whose tenant admits passwords. `blocked` when the
 *  user has active memberships and every one of those tenants requires another method (SSO, passkeys). */
export async function passwordSignInMembership(db: Db, config: Config, memberships: MembershipViewRow[]): Promise<{ membershipId: string | null; blocked: boolean }> {
  const active = memberships.filter((m) => m.status === 'active')
  for (const m of active) {
    if (allowsPassword((await getAuthPolicy(db, m.tenant_id, config)).policy)) return { membershipId: m.id, blocked: false }
  }
  return { membershipId: null, blocked: active.length > 0 }
}
