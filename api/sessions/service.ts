import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import type { Principal } from '../identity/service'
import { listLiveSessions, revokeOtherSessions, revokeSession } from './queries'

type Deps = Pick<ServiceDeps, 'sql'>

/** The caller's live sessions, newest first; the one making the request is marked current. */
export async function listSessions({ sql: db, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, principal: Principal, params: PageParams) {
  const pageKey = keys.page
  const current = currentSessionOf(principal)
  const binding = { route: 'GET /users/me/sessions', scope: `user:${principal.userId}`, filters: {} }
  const p = await paginate(pageKey, binding, params, (after, limit) => listLiveSessions(db, principal.userId, after, limit), createdCursorOf)
  return mapPage(p, (r) => ({
    id: r.id,
    current: r.id === current,
    userAgent: r.user_agent,
    ip: r.ip,
    createdAt: r.created_at.toISOString(),
    lastSeenAt: r.last_seen_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
  }))
}

export async function endSession({ sql }: Deps, sessionId: string, userId: string): Promise<void> {
  await revokeSession(sql, sessionId, userId)
}

const currentSessionOf = (p: Principal) => (p.credential === 'session' ? p.credentialId : null)

/** DELETE /sessions/{id}: signs out one other device of the caller. Another user's session, an unknown id and
 *  an already ended one are all SESSION_NOT_FOUND, so ids of other users cannot be probed. */
export async function revokeOwnSession({ sql: db }: Deps, principal: Principal, sessionId: string): Promise<void> {
  if (sessionId === currentSessionOf(principal)) {
    throw new ApiError('CURRENT_SESSION_NOT_REVOCABLE', 'This is the session making the request: sign out with DELETE /v1/sessions/current')
  }
  if (!isUuid(sessionId) || !(await revokeSession(db, sessionId, principal.userId))) {
    throw new ApiError('SESSION_NOT_FOUND', 'You have no live session with this id')
  }
}

/** Ends every session of the caller but the one making the request (all of them for a PAT). */
export async function invalidateOtherSessions({ sql }: Deps, principal: Principal) {
  return { invalidated: await revokeOtherSessions(sql, principal.userId, currentSessionOf(principal)) }
}

/** Ends every session of the caller, this one included ("sign out everywhere"). */
export async function invalidateAllSessions({ sql }: Deps, principal: Principal) {
  return { invalidated: await revokeOtherSessions(sql, principal.userId, null) }
}
