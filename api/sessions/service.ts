import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import type { RequestContext } from '../identity/context'
import type { Principal } from '../identity/service'
import { recordAudit } from '../audit/service'
import { csrfTokenFor } from '../identity/tokens'
import { listLiveSessions, revokeOtherSessions, revokeSession } from './queries'

type Deps = Pick<ServiceDeps, 'sql'>

const currentSessionOf = (p: Principal) => (p.credential === 'session' ? p.credentialId : null)

/** The session making the request, with its CSRF token: for a page whose session began without an answer it could
 *  read (the single sign-on redirect sets only the cookie). Only this origin can read the answer: the API sends no
 *  CORS headers, and the cookie is SameSite=Lax. */
export function describeCurrentSession({ keys }: Pick<ServiceDeps, 'keys'>, ctx: RequestContext) {
  const { credentialId, expiresAt } = ctx.principal
  return { id: credentialId, expiresAt: expiresAt.toISOString(), csrfToken: csrfTokenFor(keys.csrf, credentialId) }
}

/** The caller's live sessions, newest first; the one making the request is marked current. */
export async function listSessions({ sql: db, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, params: PageParams) {
  const { principal } = ctx
  const current = currentSessionOf(principal)
  const binding = { route: 'GET /users/me/sessions', scope: `user:${principal.userId}`, filters: {} }
  const p = await paginate(keys, binding, params, (after, limit) => listLiveSessions(db, principal.userId, after, limit), createdCursorOf)
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

/** Ends one session of the caller and records it, together; false when it was not a live session of theirs. */
async function endOne({ sql }: Deps, ctx: RequestContext, sessionId: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    if (!(await revokeSession(tx, sessionId, ctx.principal.userId))) return false
    await recordAudit(tx, ctx, {
      action: 'session.ended',
      target: { type: 'session', id: sessionId },
      details: { current: sessionId === currentSessionOf(ctx.principal) },
    })
    return true
  })
}

/** DELETE /sessions/current: signs this session out; a PAT has no session to end. */
export async function endSession(deps: Deps, ctx: RequestContext): Promise<void> {
  const current = currentSessionOf(ctx.principal)
  if (current) await endOne(deps, ctx, current)
}

/** DELETE /sessions/{id}: signs out one other device of the caller. Another user's session, an unknown id and
 *  an already ended one are all SESSION_NOT_FOUND, so ids of other users cannot be probed. */
export async function revokeOwnSession(deps: Deps, ctx: RequestContext, sessionId: string): Promise<void> {
  if (sessionId === currentSessionOf(ctx.principal)) {
    throw new ApiError('CURRENT_SESSION_NOT_REVOCABLE', 'This is the session making the request: sign out with DELETE /v1/sessions/current')
  }
  if (!isUuid(sessionId) || !(await endOne(deps, ctx, sessionId))) {
    throw new ApiError('SESSION_NOT_FOUND', 'You have no live session with this id')
  }
}

/** Ends the sessions of the caller but `keep` and records how many, together. */
async function endAllBut({ sql }: Deps, ctx: RequestContext, keep: string | null, action: 'session.others_ended' | 'session.all_ended') {
  const { userId } = ctx.principal
  return sql.begin(async (tx) => {
    const count = await revokeOtherSessions(tx, userId, keep)
    await recordAudit(tx, ctx, { action, target: { type: 'user', id: userId }, details: { count } })
    return { invalidated: count }
  })
}

/** Ends every session of the caller but the one making the request (all of them for a PAT). */
export const invalidateOtherSessions = (deps: Deps, ctx: RequestContext) => endAllBut(deps, ctx, currentSessionOf(ctx.principal), 'session.others_ended')

/** Ends every session of the caller, this one included ("sign out everywhere"). */
export const invalidateAllSessions = (deps: Deps, ctx: RequestContext) => endAllBut(deps, ctx, null, 'session.all_ended')
