import type { Db } from '../platform/db'
import type { SessionAuthentication } from '../identity/service'
import { pendingSecondFactors } from '../mfa/challenges'
import { findSsoConnection } from '../sso/queries'

/** Whether the way a session authenticated satisfies the second factor in `tenantId`. A factor verified in the
 *  session holds everywhere; an SSO sign-in stands in for it only in its connection's own tenant (elsewhere it is
 *  a first factor only). An account without any second factor has none to demand: the tenant's MFA-enrolment
 *  gate decides for it. A PAT carries no session authentication and is bound to its membership. */
export async function secondFactorHoldsIn(db: Db, userId: string, auth: SessionAuthentication | null, tenantId: string): Promise<boolean> {
  if (!auth || auth.secondFactorAt) return true
  if (auth.method === 'sso' && auth.ssoConnectionId && (await findSsoConnection(db, auth.ssoConnectionId, tenantId))) return true
  return (await pendingSecondFactors(db, userId)) === null
}
