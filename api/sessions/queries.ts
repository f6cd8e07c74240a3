import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import type { Db } from '../platform/db'
import type { Role } from '../identity/permissions'
import type { TenantLifecycle } from '../identity/standing'

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

export type AuthMethod = 'password' | 'passkey' | 'sso'

export interface NewSessionRow {
  id: string
  userId: string
  tokenHash: Buffer
  membershipId: string | null
  userAgent: string | null
  ip: string | null
  absoluteSeconds: number
  idleSeconds: number
  mfaPending: boolean
  passwordChangeRequired: boolean
  authMethod: AuthMethod
  ssoConnectionId: string | null
  secondFactorVerified: boolean
}

/** A new session's INSERT (returning expires_at), as a fragment of the statement that also writes its challenge and
 *  its audit entry (api/sign-in/queries.ts insertSession). */
export const sessionInsert = (db: Db, s: NewSessionRow) => db`
  insert into sessions (id, user_id, token_hash, membership_id, user_agent, ip, expires_at, idle_timeout_seconds, mfa_pending,
                        password_change_required, auth_method, sso_connection_id, second_factor_at)
  values (${s.id}, ${s.userId}, ${s.tokenHash}, ${s.membershipId}, ${s.userAgent}, ${s.ip},
          now() + make_interval(secs => ${s.absoluteSeconds}), ${s.idleSeconds}, ${s.mfaPending},
          ${s.passwordChangeRequired}, ${s.authMethod}, ${s.ssoConnectionId},
          ${s.secondFactorVerified ? db`now()` : null})
  returning expires_at`

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

/** Account erasure: every session row of one user goes (with its address and user agent); answers their digests and
 *  absolute deadlines for retired_credentials. */
export async function deleteUserSessions(db: Db, userId: string): Promise<{ digest: Buffer; expires_at: Date }[]> {
  return db<{ digest: Buffer; expires_at: Date }[]>`delete from sessions where user_id = ${userId} returning token_hash as digest, expires_at`
}

/** Moves a session to another membership under that tenant's lifetimes: the absolute deadline can only shrink. */
export async function switchSessionMembership(
  db: Db,
  s: { sessionId: string; userId: string; membershipId: string; absoluteSeconds: number; idleSeconds: number },
): Promise<void> {
  await db`
    update sessions set membership_id = ${s.membershipId}, idle_timeout_seconds = ${s.idleSeconds},
           expires_at = least(expires_at, created_at + make_interval(secs => ${s.absoluteSeconds}))
     where id = ${s.sessionId} and user_id = ${s.userId}`
}

/** Sessions sitting in a removed membership lose their tenant (they stay signed in, tenant-less). */
export async function detachMembershipSessions(db: Db, membershipId: string): Promise<number> {
  const rows = await db`update sessions set membership_id = null where membership_id = ${membershipId} returning 1`
  return rows.length
}

/** The user chose their own password: their sessions leave the initial-password restriction. */
export async function clearSessionsPasswordChange(db: Db, userId: string): Promise<void> {
  await db`update sessions set password_change_required = false where user_id = ${userId}`
}

/** The sign-in challenge was answered: the live session becomes usable. */
export async function liftSessionMfaGate(db: Db, sessionId: string): Promise<{ membership_id: string | null } | undefined> {
  const [row] = await db<{ membership_id: string | null }[]>`
    update sessions set mfa_pending = false, second_factor_at = now(), authenticated_at = now()
     where id = ${sessionId} and revoked_at is null returning membership_id`
  return row
}

// ── Resolving a presented session token (api/credentials) ───────────────────────────────────────────────────

export interface SessionRow {
  id: string
  user_id: string
  membership_id: string | null
  expires_at: Date
  last_seen_at: Date
  idle_timeout_seconds: number
  revoked_at: Date | null
  password_change_required: boolean
  user_status: string
  /** The account's address as this request found it: the audit trail's label of the actor. */
  email: string
  tenant_id: string | null
  role: Role | null
  membership_status: string | null
  membership_expires_at: Date | null
  tenant_lifecycle: TenantLifecycle | null
  /** The billing block's two inputs (api/billing/block.ts), null without a subscription. */
  subscription_status: string | null
  operator_blocked: boolean | null
  mfa_pending: boolean
  auth_method: AuthMethod
  sso_connection_id: string | null
  second_factor_at: Date | null
  authenticated_at: Date
  /** Whether the user has an active second factor; with tenant_mfa_required, decides the enrolment gate. */
  has_second_factor: boolean
  tenant_mfa_required: boolean
}

export async function findSessionByHash(db: Db, hash: Buffer): Promise<SessionRow | undefined> {
  const [row] = await db<SessionRow[]>`
    select s.id, s.user_id, s.membership_id, s.expires_at, s.last_seen_at, s.idle_timeout_seconds, s.revoked_at,
           s.password_change_required,
           u.status as user_status, u.email, m.tenant_id, m.role, m.status as membership_status,
           m.expires_at as membership_expires_at, s.mfa_pending, s.auth_method, s.sso_connection_id, s.second_factor_at,
           s.authenticated_at, t.lifecycle as tenant_lifecycle, b.status as subscription_status,
           b.operator_blocked_at is not null as operator_blocked,
           (exists (select 1 from totp_factors f where f.user_id = s.user_id and f.status = 'active')
             or exists (select 1 from webauthn_credentials w where w.user_id = s.user_id)) as has_second_factor,
           coalesce((select p.mfa_required from tenant_auth_policies p where p.tenant_id = m.tenant_id), false) as tenant_mfa_required
      from sessions s
      join users u on u.id = s.user_id
      left join memberships m on m.id = s.membership_id and m.user_id = s.user_id
      left join tenants t on t.id = m.tenant_id
      left join subscriptions b on b.tenant_id = m.tenant_id
     where s.token_hash = ${hash}`
  return row
}

/** Sliding renewal, written at most once a minute per session so reads don't turn into writes. */
export async function touchSession(db: Db, sessionId: string): Promise<void> {
  await db`update sessions set last_seen_at = now() where id = ${sessionId} and last_seen_at < now() - interval '60 seconds'`
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

/** The user proved a second factor in this session (answered its challenge, or enrolled one just now). */
export async function markSessionSecondFactor(db: Db, sessionId: string, userId: string): Promise<void> {
  await db`update sessions set second_factor_at = now(), authenticated_at = now() where id = ${sessionId} and user_id = ${userId}`
}

/** Every live session standing in one of a tenant's memberships (a tenant being deleted); returns how many. */
export async function revokeTenantSessions(db: Db, tenantId: string): Promise<number> {
  const rows = await db`
    update sessions set revoked_at = now()
     where revoked_at is null and membership_id in (select id from memberships where tenant_id = ${tenantId})
    returning 1`
  return rows.length
}
