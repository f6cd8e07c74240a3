import type { Config } from '../platform/config'
import type { Db, Sql } from '../platform/db'
import { ApiError } from '../platform/errors'
import { verifyPassword } from '../identity/passwords'
import { newSessionToken } from '../identity/tokens'
import { findUserByEmail, listUserMemberships } from '../users/queries'
import { insertSession, listLiveSessions, revokeSession } from './queries'

export interface SessionContext {
  userAgent: string | null
  ip: string | null
}

export interface NewSession {
  id: string
  token: string
  expiresAt: Date
}

/** Lucia-style: a random token the client keeps, its SHA-256 the only thing stored. */
export async function startSession(db: Db, config: Config, userId: string, membershipId: string | null, ctx: SessionContext): Promise<NewSession> {
  const { token, hash } = newSessionToken()
  const row = await insertSession(db, {
    userId, tokenHash: hash, membershipId, userAgent: ctx.userAgent?.slice(0, 512) ?? null, ip: ctx.ip,
    absoluteSeconds: config.SESSION_ABSOLUTE_HOURS * 3600, idleSeconds: config.SESSION_IDLE_MINUTES * 60,
  })
  return { id: row.id, token, expiresAt: row.expires_at }
}

export async function listSessions(db: Db, userId: string, currentSessionId: string | null, after: { createdAt: string; id: string } | null, size: number) {
  const rows = await listLiveSessions(db, userId, after, size + 1)
  return rows.map((r) => ({
    cursor: { createdAt: r.cursor_at, id: r.id },
    id: r.id,
    current: r.id === currentSessionId,
    userAgent: r.user_agent,
    ip: r.ip,
    createdAt: r.created_at.toISOString(),
    lastSeenAt: r.last_seen_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
  }))
}

/** Same answer and the same argon2 cost whether the email is unknown or the password is wrong. */
export async function signIn(sql: Sql, config: Config, input: { email: string; password: string }, ctx: SessionContext) {
  const user = await findUserByEmail(sql, input.email)
  const valid = await verifyPassword(input.password, user?.password_hash)
  if (!user || !valid || user.status !== 'active') throw new ApiError('UNAUTHORIZED', 'Email or password is incorrect')
  const membership = (await listUserMemberships(sql, user.id)).find((m) => m.status === 'active')
  const session = await startSession(sql, config, user.id, membership?.id ?? null, ctx)
  return { user, membershipId: membership?.id ?? null, session }
}

export async function endSession(db: Db, sessionId: string, userId: string): Promise<void> {
  await revokeSession(db, sessionId, userId)
}
