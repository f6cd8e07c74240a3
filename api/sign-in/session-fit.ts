import type { Db } from '../platform/db'
import type { SessionAuthentication } from '../identity/service'
import { pendingSecondFactors } from '../mfa/challenges'
import { findSsoConnection } from '../sso/queries'

/** Whether the way a session authenticated satisfies the second factor in `tenantId`. A password or passkey session
 *  met its account's second factor at sign-in (the MFA gate), which holds in every tenant. An SSO sign-in skipped
 *  that gate: the provider stands in for our factor only in its connection's own tenant, so elsewhere it holds only
 *  if a factor was verified in the session or the account has none to demand (the tenant's MFA-enrolment gate then
 *  decides). A PAT carries no session authentication and is bound to its membership. */
export async function secondFactorHoldsIn(db: Db, userId: string, auth: SessionAuthentication | null, tenantId: string): Promise<boolean> {
  if (!auth || auth.method !== 'sso' || auth.secondFactorAt) return true
  if (auth.ssoConnectionId && (await findSsoConnection(db, auth.ssoConnectionId, tenantId))) return true
  return (await pendingSecondFactors(db, userId)) === null
}
