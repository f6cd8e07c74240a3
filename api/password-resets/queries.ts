import type { Db } from '../platform/db'

export interface ResetRow {
  id: string
  user_id: string
  kind: 'reset' | 'activation'
  code_hash: Uint8Array | null
  attempts: number
  expires_at: Date
  used_at: Date | null
}

export async function insertReset(
  db: Db,
  r: {
    id: string
    userId: string
    kind: ResetRow['kind']
    tokenHash: Buffer
    codeHash: Buffer | null
    ttlSeconds: number
  },
): Promise<void> {
  await db`
    insert into password_resets (id, user_id, kind, token_hash, code_hash, expires_at)
    values (${r.id}, ${r.userId}, ${r.kind}, ${r.tokenHash}, ${r.codeHash}, now() + make_interval(secs => ${r.ttlSeconds}))`
}

export async function findResetByTokenHash(db: Db, tokenHash: Buffer): Promise<ResetRow | undefined> {
  const [row] = await db<ResetRow[]>`
    select id, user_id, kind, code_hash, attempts, expires_at, used_at from password_resets where token_hash = ${tokenHash}`
  return row
}

/** The newest unused code grant of a user: an older one is superseded by a newer request. */
export async function findLatestCodeReset(db: Db, userId: string): Promise<ResetRow | undefined> {
  const [row] = await db<ResetRow[]>`
    select id, user_id, kind, code_hash, attempts, expires_at, used_at from password_resets
     where user_id = ${userId} and kind = 'reset' and used_at is null
     order by created_at desc limit 1`
  return row
}

/** Takes one code attempt of an unused grant before the code is compared, in one conditional update: false when
 *  none is left, so parallel guesses cannot all pass a count read earlier. */
export async function reserveResetAttempt(db: Db, id: string, maxAttempts: number): Promise<boolean> {
  const rows = await db`update password_resets set attempts = attempts + 1 where id = ${id} and used_at is null and attempts < ${maxAttempts} returning 1`
  return rows.length === 1
}

/** A right code is no failed attempt: it gives its attempt back (a refused new password leaves the grant usable). */
export async function releaseResetAttempt(db: Db, id: string): Promise<void> {
  await db`update password_resets set attempts = attempts - 1 where id = ${id} and attempts > 0`
}

/** Single use: false when another request consumed it first. Every other open grant of the user dies with it. */
export async function consumeReset(db: Db, id: string, userId: string): Promise<boolean> {
  const rows = await db`update password_resets set used_at = now() where id = ${id} and used_at is null returning 1`
  if (rows.length !== 1) return false
  await db`update password_resets set used_at = now() where user_id = ${userId} and used_at is null`
  return true
}

/** At most one request per address and interval: false when the last one is more recent. */
export async function claimResetSlot(db: Db, emailKey: Buffer, intervalSeconds: number): Promise<boolean> {
  const rows = await db`
    insert into password_reset_throttle (email_key, requested_at) values (${emailKey}, now())
    on conflict (email_key) do update set requested_at = now()
      where password_reset_throttle.requested_at <= now() - make_interval(secs => ${intervalSeconds})
    returning 1`
  return rows.length === 1
}

/** Throttle rows older than an hour no longer throttle anything. */
export async function purgeResetThrottles(db: Db): Promise<number> {
  return (await db`delete from password_reset_throttle where requested_at < now() - interval '1 hour'`).count
}

/** Every reset grant of a user, used or not (account erasure). */
export async function deleteUserResets(db: Db, userId: string): Promise<void> {
  await db`delete from password_resets where user_id = ${userId}`
}
