import type { ServiceDeps } from '../platform/deps'
import { csrfTokenFor } from '../identity/tokens'
import { describeMe } from '../users/service'
import type { NewSession } from './session-start'

/** The body every sign-in answers with: who you are, and the session's id, expiry and CSRF token.
 *  The session token itself travels only in the HttpOnly cookie. */
export async function sessionEnvelope(deps: Pick<ServiceDeps, 'sql' | 'keys'>, userId: string, membershipId: string | null, session: NewSession) {
  const { me } = await describeMe(deps, userId, membershipId)
  const c = session.mfaChallenge
  return {
    ...me,
    session: {
      id: session.id, expiresAt: session.expiresAt.toISOString(), csrfToken: csrfTokenFor(deps.keys.csrf, session.id), state: session.state,
      mfaChallenge: c ? { id: c.id, methods: c.methods, webauthn: c.webauthn, expiresAt: c.expiresAt.toISOString() } : null,
    },
  }
}
