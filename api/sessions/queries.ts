import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import type { Db } from '../platform/db'

export interface SessionListRow {
  id: string
  /** created_at with its microseconds, for the keyset cursor (a JS Date keeps only milliseconds). */
  cursor_at: string
  user_agent: string | null
  ip: string | null
  created_at: Date
  last_seen_at: Date
  expires_at: Date
}

export async function insertSession(db: Db, s: {
  userId: string; tokenHash: Buffer; membershipId: string | null; userAgent: string | null; ip: string | null
  absoluteSeconds: number; idleSeconds: number; mfaPending?: boolean; passwordChangeRequired?: boolean
}): Promise<{ id: string; expires_at: Date }> {
  const [row] = await db<{ id: string; expires_at: Date }[]>`
    insert into sessions (user_id, token_hash, membership_id, user_agent, ip, expires_at, idle_timeout_seconds, mfa_pending,
                          password_change_required)
    values (${s.userId}, ${s.tokenHash}, ${s.membershipId}, ${s.userAgent}, ${s.ip},
            now() + make_interval(secs => ${s.absoluteSeconds}), ${s.idleSeconds}, ${s.mfaPending ?? false},
            ${s.passwordChangeRequired ?? false})
    returning id, expires_at`
  return row!
}

export async function setSessionMembership(db: Db, sessionId: string, userId: string, membershipId: string): Promise<void> {
  await db`update sessions set membership_id = ${membershipId} where id = ${sessionId} and user_id = ${userId}`
}

export async function revokeSession(db: Db, sessionId: string, userId: string): Promise<boolean> {
  const rows = await db`update sessions set revoked_at = now() where id = ${sessionId} and user_id = ${userId} and revoked_at is null returning 1`
  return rows.length === 1
}

/** Live sessions of one user, newest first, keyset-paged on (created_at, id). */
export async function listLiveSessions(db: Db, userId: string, after: CreatedCursor | null, limit: number): Promise<SessionListRow[]> {
  return db<SessionListRow[]>`
    select id, user_agent, ip, created_at, last_seen_at, expires_at,
           ${db.unsafe(CURSOR_AT)}
      from sessions
     where user_id = ${userId} and revoked_at is null and expires_at > now()
       and now() < last_seen_at + make_interval(secs => idle_timeout_seconds)
       ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** Ends every live session of a user but `keepId` (null: all of them); returns how many ended. */
export async function revokeOtherSessions(db: Db, userId: string, keepId: string | null): Promise<number> {
  const rows = await db`
    update sessions set revoked_at = now()
     where user_id = ${userId} and revoked_at is null and (${keepId}::uuid is null or id <> ${keepId})
    returning 1`
  return rows.length
}

/** Moves a session to another membership under that tenant's lifetimes: the absolute deadline can only shrink. */
export async function switchSessionMembership(db: Db, s: { sessionId: string; userId: string; membershipId: string; absoluteSeconds: number; idleSeconds: number }): Promise<void> {
  await db`
    update sessions set membership_id = ${s.membershipId}, idle_timeout_seconds = ${s.idleSeconds},
           expires_at = least(expires_at, created_at + make_interval(secs => ${s.absoluteSeconds}))
     where id = ${s.sessionId} and user_id = ${s.userId}`
}

export async function tenantOfMembership(db: Db, membershipId: string): Promise<string | undefined> {
  const [row] = await db<{ tenant_id: string }[]>`select tenant_id from memberships where id = ${membershipId}`
  return row?.tenant_id
}

/** Deletes up to `limit` sessions that expired or were revoked more than `revokedRetention` (an interval) ago;
 *  returns how many. SKIP LOCKED: a row a request is still holding is left for the next run instead of waited on. */
export async function deleteDeadSessions(db: Db, limit: number, revokedRetention: string): Promise<number> {
  const result = await db`
    delete from sessions where id in (
      select id from sessions
      where expires_at < now() or revoked_at < now() - ${revokedRetention}::interval
      limit ${limit} for update skip locked)`
  return result.count
}
