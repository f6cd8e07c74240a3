import type { Db } from '../platform/db'
import type { Role } from './permissions'

export interface PatRow {
  id: string
  tenant_id: string
  user_id: string
  membership_id: string
  scopes: string[]
  expires_at: Date
  revoked_at: Date | null
  last_used_at: Date | null
  role: Role
  membership_status: string
  membership_expires_at: Date | null
  user_status: string
}

export async function findPatByHash(db: Db, hash: Buffer): Promise<PatRow | undefined> {
  const [row] = await db<PatRow[]>`
    select k.id, k.tenant_id, k.user_id, k.membership_id, k.scopes, k.expires_at, k.revoked_at, k.last_used_at,
           m.role, m.status as membership_status, m.expires_at as membership_expires_at, u.status as user_status
      from api_keys k
      join memberships m on m.id = k.membership_id and m.tenant_id = k.tenant_id
      join users u on u.id = k.user_id
     where k.token_hash = ${hash}`
  return row
}

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
  tenant_id: string | null
  role: Role | null
  membership_status: string | null
  membership_expires_at: Date | null
  mfa_pending: boolean
  /** Whether the user has an active second factor; with tenant_mfa_required, decides the enrolment gate. */
  has_second_factor: boolean
  tenant_mfa_required: boolean
}

export async function findSessionByHash(db: Db, hash: Buffer): Promise<SessionRow | undefined> {
  const [row] = await db<SessionRow[]>`
    select s.id, s.user_id, s.membership_id, s.expires_at, s.last_seen_at, s.idle_timeout_seconds, s.revoked_at,
           s.password_change_required,
           u.status as user_status, m.tenant_id, m.role, m.status as membership_status,
           m.expires_at as membership_expires_at, s.mfa_pending,
           (exists (select 1 from totp_factors f where f.user_id = s.user_id and f.status = 'active')
             or exists (select 1 from webauthn_credentials w where w.user_id = s.user_id)) as has_second_factor,
           coalesce((select p.mfa_required from tenant_auth_policies p where p.tenant_id = m.tenant_id), false) as tenant_mfa_required
      from sessions s
      join users u on u.id = s.user_id
      left join memberships m on m.id = s.membership_id and m.user_id = s.user_id
     where s.token_hash = ${hash}`
  return row
}

/** Sliding renewal, written at most once a minute per session so reads don't turn into writes. */
export async function touchSession(db: Db, sessionId: string): Promise<void> {
  await db`update sessions set last_seen_at = now() where id = ${sessionId} and last_seen_at < now() - interval '60 seconds'`
}

/** One UPDATE for a whole batch of PAT uses (see LastUsedRecorder). */
export async function recordPatUses(db: Db, uses: { id: string; at: Date }[]): Promise<void> {
  if (uses.length === 0) return
  const ids = uses.map((u) => u.id)
  const ats = uses.map((u) => u.at.toISOString())
  await db`
    update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, v.at), v.at)
      from (select unnest(${ids}::uuid[]) as id, unnest(${ats}::timestamptz[]) as at) v
     where k.id = v.id`
}
