import type { Db, Sql } from '../platform/db'
import type { SealedColumn } from '../platform/keyring'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export interface TotpRow {
  user_id: string
  secret_sealed: Buffer
  status: 'pending' | 'active'
  last_used_step: string | null // bigint comes back as a string
  activated_at: Date | null
}

export interface WebAuthnCredentialRow {
  id: string
  user_id: string
  credential_id: string
  public_key: Buffer
  sign_count: string
  transports: string[]
  device_type: string
  backed_up: boolean
  name: string | null
  created_at: Date
  last_used_at: Date | null
  /** created_at with its microseconds, for the keyset cursor. */
  cursor_at: string
}

export interface MfaChallengeRow {
  id: string
  session_id: string
  user_id: string
  webauthn_challenge: string | null
  attempts: number
  expires_at: Date
  confirmed_at: Date | null
}

// ── TOTP ────────────────────────────────────────────────────────────────────────────────────────────────────

export async function findTotp(db: Db, userId: string): Promise<TotpRow | undefined> {
  const [row] = await db<TotpRow[]>`select user_id, secret_sealed, status, last_used_step, activated_at from totp_factors where user_id = ${userId}`
  return row
}

/** A new pending enrolment replaces an older pending one; an active factor is never overwritten. */
export async function upsertPendingTotp(db: Db, userId: string, sealed: Buffer): Promise<boolean> {
  const rows = await db`
    insert into totp_factors (user_id, secret_sealed, status) values (${userId}, ${sealed}, 'pending')
    on conflict (user_id) do update set secret_sealed = excluded.secret_sealed, created_at = now(), last_used_step = null
     where totp_factors.status = 'pending'
    returning 1`
  return rows.length === 1
}

/** Records `step` as used only if it is later than the last used one: two racing uses of one code cannot both win. */
export async function useTotpStep(db: Db, userId: string, step: number, activate: boolean): Promise<boolean> {
  const rows = await db`
    update totp_factors
       set last_used_step = ${step},
           status = case when ${activate} then 'active' else status end,
           activated_at = case when ${activate} then now() else activated_at end
     where user_id = ${userId} and (last_used_step is null or last_used_step < ${step})
       and status = case when ${activate} then 'pending' else 'active' end
    returning 1`
  return rows.length === 1
}

export async function deleteTotp(db: Db, userId: string): Promise<void> {
  await db`delete from totp_factors where user_id = ${userId}`
  await db`delete from recovery_codes where user_id = ${userId}`
}

// ── Recovery codes ──────────────────────────────────────────────────────────────────────────────────────────

export async function replaceRecoveryCodes(db: Db, userId: string, hashes: Buffer[]): Promise<void> {
  await db`delete from recovery_codes where user_id = ${userId}`
  await db`insert into recovery_codes ${db(hashes.map((code_hash) => ({ user_id: userId, code_hash })))}`
}

/** Spends one unused recovery code of this user; false when it is unknown or already spent. */
export async function spendRecoveryCode(db: Db, userId: string, hash: Buffer): Promise<boolean> {
  const rows = await db`update recovery_codes set used_at = now() where user_id = ${userId} and code_hash = ${hash} and used_at is null returning 1`
  return rows.length === 1
}

// ── Passkeys ────────────────────────────────────────────────────────────────────────────────────────────────

const CREDENTIAL_COLUMNS = 'id, user_id, credential_id, public_key, sign_count, transports, device_type, backed_up, name, created_at, last_used_at'

export async function insertWebAuthnCredential(
  db: Db,
  c: {
    userId: string
    credentialId: string
    publicKey: Uint8Array
    signCount: number
    transports: string[]
    deviceType: string
    backedUp: boolean
    name: string | null
  },
): Promise<WebAuthnCredentialRow | null> {
  const [row] = await db<WebAuthnCredentialRow[]>`
    insert into webauthn_credentials (user_id, credential_id, public_key, sign_count, transports, device_type, backed_up, name)
    values (${c.userId}, ${c.credentialId}, ${Buffer.from(c.publicKey)}, ${c.signCount}, ${c.transports}, ${c.deviceType}, ${c.backedUp}, ${c.name})
    on conflict (credential_id) do nothing
    returning ${db.unsafe(CREDENTIAL_COLUMNS)}, '' as cursor_at`
  return row ?? null
}

export async function findWebAuthnCredential(db: Db, credentialId: string): Promise<WebAuthnCredentialRow | undefined> {
  const [row] = await db<WebAuthnCredentialRow[]>`
    select ${db.unsafe(CREDENTIAL_COLUMNS)}, '' as cursor_at from webauthn_credentials where credential_id = ${credentialId}`
  return row
}

export async function listAllWebAuthnCredentials(db: Db, userId: string): Promise<{ credential_id: string; transports: string[] }[]> {
  return db`select credential_id, transports from webauthn_credentials where user_id = ${userId} order by created_at`
}

/** One user's passkeys, newest first, keyset-paged on (created_at, id). */
export async function listWebAuthnCredentials(db: Db, userId: string, after: CreatedCursor | null, limit: number): Promise<WebAuthnCredentialRow[]> {
  return db<WebAuthnCredentialRow[]>`
    select ${db.unsafe(CREDENTIAL_COLUMNS)}, ${db.unsafe(CURSOR_AT)}
      from webauthn_credentials
     where user_id = ${userId} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** The counter only moves forward; a response whose counter lost a race with another use does not write. */
export async function recordWebAuthnUse(db: Db, id: string, newCount: number): Promise<boolean> {
  const rows = await db`
    update webauthn_credentials set sign_count = ${newCount}, last_used_at = now()
     where id = ${id} and (sign_count < ${newCount} or (sign_count = 0 and ${newCount} = 0))
    returning 1`
  return rows.length === 1
}

/** The removed passkey's name, or undefined when the user has none with this id. */
export async function deleteWebAuthnCredential(db: Db, userId: string, id: string): Promise<{ name: string | null } | undefined> {
  const [row] = await db<{ name: string | null }[]>`delete from webauthn_credentials where id = ${id} and user_id = ${userId} returning name`
  return row
}

/** A user's factors at a glance (GET /users/me/mfa), in one statement: under load each read of a request waits for a
 *  pool connection (and may be queued behind what runs on it), so five reads at once took 1.1-1.9 s in the mixed-load
 *  bench where one-read routes took 18-272 ms. */
export async function mfaSummaryOf(db: Db, userId: string) {
  const [row] = await db<{ totp_status: TotpRow['status'] | null; totp_activated_at: Date | null; passkeys: number; recovery_codes_left: number }[]>`
    select t.status as totp_status, t.activated_at as totp_activated_at,
           (select count(*)::int from webauthn_credentials where user_id = ${userId}) as passkeys,
           (select count(*)::int from recovery_codes where user_id = ${userId} and used_at is null) as recovery_codes_left
      from (select 1) one left join totp_factors t on t.user_id = ${userId}`
  return row!
}

// ── Challenges ──────────────────────────────────────────────────────────────────────────────────────────────

// Challenges are pruned as new ones are made (both tables are indexed on expires_at), so the anonymous
// passkey-challenge route cannot grow them beyond what the rate budget admits in a TTL.
export async function insertWebAuthnChallenge(
  db: Db,
  c: { challenge: string; purpose: 'registration' | 'sign_in'; userId: string | null; ttlSeconds: number },
) {
  await db`delete from webauthn_challenges where expires_at < now()`
  await db`
    insert into webauthn_challenges (challenge, purpose, user_id, expires_at)
    values (${c.challenge}, ${c.purpose}, ${c.userId}, now() + make_interval(secs => ${c.ttlSeconds}))`
}

/** Deletes and so spends a live challenge; false when it is unknown, expired, for another purpose or user. */
export async function takeWebAuthnChallenge(db: Db, challenge: string, purpose: 'registration' | 'sign_in', userId: string | null): Promise<boolean> {
  const rows = await db`
    delete from webauthn_challenges
     where challenge = ${challenge} and purpose = ${purpose} and user_id is not distinct from ${userId}::uuid
    returning expires_at > now() as live`
  return rows.length === 1 && rows[0]!.live === true
}

/** A new session's sign-in challenge (returning id, expires_at), as a fragment of the statement that writes the
 *  session (api/sign-in/queries.ts insertSession). */
export const mfaChallengeInsert = (db: Db, c: { sessionId: string; userId: string; webauthnChallenge: string | null; ttlSeconds: number }) => db`
  insert into mfa_challenges (session_id, user_id, webauthn_challenge, expires_at)
  values (${c.sessionId}, ${c.userId}, ${c.webauthnChallenge}, now() + make_interval(secs => ${c.ttlSeconds}))
  returning id, expires_at`

/** Challenges a day past their expiry, swept as a new one is written (a fragment of the same statement). */
export const expiredMfaChallengesDelete = (db: Db) => db`delete from mfa_challenges where expires_at < now() - interval '1 day'`

/** Takes one attempt of a challenge that can still be answered (not confirmed, not expired, attempts left) before
 *  the answer is checked, in one conditional update: parallel answers cannot all pass a count read earlier. */
export async function reserveMfaChallengeAttempt(db: Db, id: string, maxAttempts: number): Promise<MfaChallengeRow | undefined> {
  const [row] = await db<MfaChallengeRow[]>`
    update mfa_challenges set attempts = attempts + 1
     where id = ${id} and confirmed_at is null and expires_at > now() and attempts < ${maxAttempts}
    returning *`
  return row
}

/** Gives back an attempt whose answer was never checked (the account's budget refused it first). */
export async function releaseMfaChallengeAttempt(db: Db, id: string): Promise<void> {
  await db`update mfa_challenges set attempts = attempts - 1 where id = ${id} and attempts > 0`
}

/** Spends an open challenge once; the session whose gate it lifts, or undefined. */
export async function markMfaChallengeConfirmed(db: Db, id: string): Promise<string | undefined> {
  const [row] = await db<{ session_id: string }[]>`
    update mfa_challenges set confirmed_at = now() where id = ${id} and confirmed_at is null and expires_at > now() returning session_id`
  return row?.session_id
}

/** What the sign-in gate needs to know about a user's factors, in one statement (every password sign-in asks). */
export async function secondFactorsOf(db: Db, userId: string): Promise<{ totp: boolean; webauthn: { credential_id: string; transports: string[] }[] }> {
  const [row] = await db<{ totp: boolean; webauthn: { credential_id: string; transports: string[] }[] }[]>`
    select exists (select 1 from totp_factors where user_id = ${userId} and status = 'active') as totp,
           coalesce((select json_agg(json_build_object('credential_id', credential_id, 'transports', transports) order by created_at)
                       from webauthn_credentials where user_id = ${userId}), '[]'::json) as webauthn`
  return row!
}

// ── Failure budget ──────────────────────────────────────────────────────────────────────────────────────────

// Distinct from the single-key lock of api/platform/migrate.ts: the two-key form is its own lock space.
const FAILURE_BUDGET_LOCK = 727_002

/** Takes one slot of the user's failure budget before an answer is checked: its id, or the seconds until the oldest
 *  failure leaves the window when the budget is full. Counting and inserting happen under a per-user transaction
 *  lock, so parallel answers queue for the count instead of all reading the same one. */
export async function reserveMfaFailureSlot(
  sql: Sql,
  userId: string,
  budget: number,
  windowSeconds: number,
): Promise<{ slot: string } | { retryAfter: number }> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${FAILURE_BUDGET_LOCK}, hashtext(${userId}))`
    await tx`delete from mfa_failures where user_id = ${userId} and failed_at <= now() - make_interval(secs => ${windowSeconds})`
    const [row] = await tx<{ failures: number; retry_after: number }[]>`
      select count(*)::int as failures,
             coalesce(ceil(extract(epoch from min(failed_at) + make_interval(secs => ${windowSeconds}) - now())), 0)::int as retry_after
        from mfa_failures where user_id = ${userId}`
    if (row!.failures >= budget) return { retryAfter: Math.max(1, row!.retry_after) }
    const [slot] = await tx<{ id: string }[]>`insert into mfa_failures (user_id) values (${userId}) returning id::text`
    return { slot: slot!.id }
  })
}

/** A right answer is no failure: its slot is given back. */
export async function releaseMfaFailureSlot(db: Db, slot: string): Promise<void> {
  await db`delete from mfa_failures where id = ${slot}::bigint`
}

/** TOTP seeds, for the re-seal (activities/reseal-batch.ts). */
export const totpSecrets: SealedColumn = {
  name: 'totp_factors.secret_sealed',
  purpose: 'secrets',
  batch: (db, after, limit) => db<{ id: string; sealed: Buffer }[]>`
    select user_id::text as id, secret_sealed as sealed from totp_factors
     where ${after}::uuid is null or user_id > ${after}::uuid order by user_id limit ${limit}`,
  replace: async (db, id, from, to) => (await db`update totp_factors set secret_sealed = ${to} where user_id = ${id} and secret_sealed = ${from}`).count === 1,
}

/** Every second factor of a user and what hangs on them (account erasure); answers what was there. */
export async function eraseSecondFactors(db: Db, userId: string): Promise<{ totp: number; recoveryCodes: number; passkeys: number }> {
  const [row] = await db<{ totp: number; recovery_codes: number; passkeys: number }[]>`
    with totp as (delete from totp_factors where user_id = ${userId} returning 1),
         codes as (delete from recovery_codes where user_id = ${userId} returning 1),
         keys as (delete from webauthn_credentials where user_id = ${userId} returning 1),
         wchallenges as (delete from webauthn_challenges where user_id = ${userId} returning 1),
         challenges as (delete from mfa_challenges where user_id = ${userId} returning 1),
         failures as (delete from mfa_failures where user_id = ${userId} returning 1)
    -- Postgres runs every data-modifying WITH to completion, read or not.
    select (select count(*) from totp)::int as totp, (select count(*) from codes)::int as recovery_codes, (select count(*) from keys)::int as passkeys`
  return { totp: row!.totp, recoveryCodes: row!.recovery_codes, passkeys: row!.passkeys }
}
