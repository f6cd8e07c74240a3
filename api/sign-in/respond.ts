import type { ServiceDeps } from '../platform/deps'
import { csrfTokenFor } from '../identity/tokens'
import type { MembershipViewRow } from '../memberships/queries'
import type { UserRow } from '../users/queries'
import { describeMe, meOf } from '../users/service'
import type { NewSession } from './session-start'

/** The body every sign-in answers with: who you are, and the session's id, expiry and CSRF token.
 *  The session token itself travels only in the HttpOnly cookie. A sign-in that already read the account and its
 *  memberships (`known`) answers from those. */
export async function sessionEnvelope(
  deps: Pick<ServiceDeps, 'sql' | 'keys'>,
  userId: string,
  membershipId: string | null,
  session: NewSession,
  known?: { user: UserRow; memberships: MembershipViewRow[] },
) {
  const me = known ? meOf(known.user, known.memberships, membershipId) : (await describeMe(deps, userId, membershipId)).me
  const c = session.mfaChallenge
  return {
    ...me,
    session: {
      id: session.id,
      expiresAt: session.expiresAt.toISOString(),
      csrfToken: csrfTokenFor(deps.keys.csrf, session.id),
      state: session.state,
      mfaChallenge: c ? { id: c.id, methods: c.methods, webauthn: c.webauthn, expiresAt: c.expiresAt.toISOString() } : null,
    },
  }
}
