// A sign-in's two statements: one read of everything the landing, the session and the answer need, and one write of
// the session with its challenge and its audit entry. Each round trip to Postgres costs the API and Postgres CPU that
// the argon2id verification beside it then lacks (bench/sign-in.ts).
import type { Db } from '../platform/db'
import type { AuthPolicyRow } from '../auth-policy/queries'
import { auditAppend, type NewAuditRow } from '../audit/queries'
import type { MembershipViewRow } from '../memberships/queries'
import type { SecondFactors } from '../mfa/challenges'
import { expiredMfaChallengesDelete, mfaChallengeInsert } from '../mfa/queries'
import { sessionInsert, type NewSessionRow } from '../sessions/queries'
import type { newClientNotice } from '../notifications/queries'
import type { UserRow } from '../users/queries'

/** A tenant the account is an active member of: its policy row (none while it has the defaults) and the email
 *  domains it verified. */
export interface MemberTenantRow {
  tenant_id: string
  policy: AuthPolicyRow | null
  verified_domains: string[]
}

export interface SignInAccountRow extends UserRow {
  /** As listUserMemberships reads them: every membership but removed ones, oldest first. */
  memberships: MembershipViewRow[]
  member_tenants: MemberTenantRow[]
  totp: boolean
  webauthn: SecondFactors['webauthn']
}

/** The account by its address (a password sign-in) or its id (a passkey's), with its memberships, the policies and
 *  verified domains of the tenants it is an active member of, and its second factors: what the landing decides on,
 *  the session starts with and the answer shows, in one statement. The memberships read as listUserMemberships
 *  reads them, the factors as secondFactorsOf. */
export async function findSignInAccount(db: Db, by: { email: string } | { id: string }): Promise<SignInAccountRow | undefined> {
  const [row] = await db<SignInAccountRow[]>`
    select u.*,
           coalesce((
             select json_agg(json_build_object(
                      'id', m.id, 'tenant_id', m.tenant_id, 'tenant_name', t.name, 'tenant_slug', t.slug, 'role', m.role,
                      'status', case when m.status = 'active' and m.expires_at <= now() then 'expired' else m.status end)
                    order by m.created_at, m.id)
               from memberships m join tenants t on t.id = m.tenant_id
              where m.user_id = u.id and m.status <> 'removed'), '[]'::json) as memberships,
           coalesce((
             select json_agg(json_build_object(
                      'tenant_id', m.tenant_id,
                      'policy', (select to_json(p) from tenant_auth_policies p where p.tenant_id = m.tenant_id),
                      'verified_domains', array(select d.domain from tenant_domains d where d.tenant_id = m.tenant_id and d.verified_at is not null)))
               from memberships m
              where m.user_id = u.id and m.status = 'active'), '[]'::json) as member_tenants,
           exists (select 1 from totp_factors f where f.user_id = u.id and f.status = 'active') as totp,
           coalesce((select json_agg(json_build_object('credential_id', w.credential_id, 'transports', w.transports) order by w.created_at)
                       from webauthn_credentials w where w.user_id = u.id), '[]'::json) as webauthn
      from users u
     where ${'email' in by ? db`lower(u.email) = lower(${by.email})` : db`u.id = ${by.id}`}`
  if (!row) return undefined
  // Inside JSON a timestamp arrives as text.
  for (const t of row.member_tenants) {
    if (t.policy) t.policy.updated_at = t.policy.updated_at === null ? null : new Date(t.policy.updated_at as unknown as string)
  }
  return row
}

/** The session, its sign-in challenge when it starts gated (sweeping challenges a day past their expiry), and its
 *  audit entry when given, in one statement: all of it is written or none, without a transaction of its own. Each
 *  table's own module writes it (the fragments); this only puts them together. */
export async function insertSession(
  db: Db,
  s: NewSessionRow,
  challenge: { webauthnChallenge: string | null; ttlSeconds: number } | null,
  entry: NewAuditRow | null,
  notice: ReturnType<typeof newClientNotice> | null = null,
): Promise<{ expires_at: Date; challenge_id: string | null; challenge_expires_at: Date | null; notice_id: string | null }> {
  const [row] = await db<{ expires_at: Date; challenge_id: string | null; challenge_expires_at: Date | null; notice_id: string | null }[]>`
    with s as (${sessionInsert(db, s)})
    ${challenge ? db`, swept as (${expiredMfaChallengesDelete(db)}), c as (${mfaChallengeInsert(db, { sessionId: s.id, userId: s.userId, ...challenge })})` : db``}
    ${entry ? db`, a as (select 1 from ${auditAppend(db, entry)})` : db``}
    ${notice ? db`, ${notice}` : db``}
    select s.expires_at,
           ${challenge ? db`c.id` : db`null::uuid`} as challenge_id,
           ${challenge ? db`c.expires_at` : db`null::timestamptz`} as challenge_expires_at,
           ${notice ? db`(select id from nc_note)` : db`null::uuid`} as notice_id
      from s ${challenge ? db`cross join c` : db``} ${entry ? db`cross join a` : db``}`
  return row!
}
