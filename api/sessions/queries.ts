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
  absoluteSeconds: number; idleSeconds: number
}): Promise<{ id: string; expires_at: Date }> {
  const [row] = await db<{ id: string; expires_at: Date }[]>`
    insert into sessions (user_id, token_hash, membership_id, user_agent, ip, expires_at, idle_timeout_seconds)
    values (${s.userId}, ${s.tokenHash}, ${s.membershipId}, ${s.userAgent}, ${s.ip},
            now() + make_interval(secs => ${s.absoluteSeconds}), ${s.idleSeconds})
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
export async function listLiveSessions(db: Db, userId: string, after: { createdAt: string; id: string } | null, limit: number): Promise<SessionListRow[]> {
  return db<SessionListRow[]>`
    select id, user_agent, ip, created_at, last_seen_at, expires_at,
           to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at
      from sessions
     where user_id = ${userId} and revoked_at is null and expires_at > now()
       and now() < last_seen_at + make_interval(secs => idle_timeout_seconds)
       and (${after === null} or (created_at, id) < (${after?.createdAt ?? null}::timestamptz, ${after?.id ?? null}::uuid))
     order by created_at desc, id desc
     limit ${limit}`
}
