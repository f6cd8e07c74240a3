import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import type { Role } from '../identity/permissions'
import type { TenantLifecycle } from '../identity/standing'

export interface TenantInvitationRow {
  id: string
  tenant_id: string
  email: string
  role: Role
  invited_by: string | null
  expires_at: Date
  accepted_at: Date | null
  revoked_at: Date | null
  created_at: Date
}

const INVITATION = 'id, tenant_id, email, role, invited_by, expires_at, accepted_at, revoked_at, created_at'

/** A new invitation supersedes the open one for the same address (the partial unique index allows one). */
export async function revokeOpenInvitations(db: Db, tenantId: string, email: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`update tenant_invitations set revoked_at = now()
            where tenant_id = ${tenantId} and lower(email) = lower(${email}) and accepted_at is null and revoked_at is null
            returning id`
  return rows.map((r) => r.id)
}

export async function insertTenantInvitation(
  db: Db,
  i: {
    tenantId: string
    email: string
    role: Role
    tokenHash: Buffer
    invitedBy: string
    days: number
  },
): Promise<TenantInvitationRow> {
  const [row] = await db<TenantInvitationRow[]>`
    insert into tenant_invitations (tenant_id, email, role, token_hash, invited_by, expires_at)
    values (${i.tenantId}, ${i.email}, ${i.role}, ${i.tokenHash}, ${i.invitedBy}, now() + make_interval(days => ${i.days}))
    returning ${db.unsafe(INVITATION)}`
  return row!
}

/** Locked for the acceptance transaction, so two acceptances of one token cannot both pass. The tenant row is share-locked too: an offboarding that starts meanwhile waits, so no member joins a tenant that
 *  has just stopped taking new work. */
export async function lockInvitationByHash(
  db: Db,
  hash: Buffer,
): Promise<
  | (TenantInvitationRow & { tenant_name: string; tenant_lifecycle: TenantLifecycle; subscription_status: string | null; operator_blocked: boolean | null })
  | undefined
> {
  const [row] = await db<
    (TenantInvitationRow & { tenant_name: string; tenant_lifecycle: TenantLifecycle; subscription_status: string | null; operator_blocked: boolean | null })[]
  >`
    select ${db.unsafe(
      INVITATION.split(', ')
        .map((c) => `i.${c}`)
        .join(', '),
    )}, t.name as tenant_name, t.lifecycle as tenant_lifecycle, b.status as subscription_status,
           b.operator_blocked_at is not null as operator_blocked
      from tenant_invitations i join tenants t on t.id = i.tenant_id
      left join subscriptions b on b.tenant_id = i.tenant_id
     where i.token_hash = ${hash}
       for update of i for share of t`
  return row
}

export async function markInvitationAccepted(db: Db, id: string, userId: string): Promise<void> {
  await db`update tenant_invitations set accepted_at = now(), accepted_by = ${userId} where id = ${id}`
}

const STATUS_SQL = {
  pending: 'accepted_at is null and revoked_at is null and expires_at > now()',
  accepted: 'accepted_at is not null',
  revoked: 'revoked_at is not null and accepted_at is null',
  expired: 'accepted_at is null and revoked_at is null and expires_at <= now()',
} as const

export async function listTenantInvitations(db: Db, tenantId: string, status: keyof typeof STATUS_SQL, after: CreatedCursor | null, limit: number) {
  return db<(TenantInvitationRow & { cursor_at: string })[]>`
    select ${db.unsafe(INVITATION)}, ${db.unsafe(CURSOR_AT)}
      from tenant_invitations
     where tenant_id = ${tenantId} and ${db.unsafe(STATUS_SQL[status])} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

export async function findTenantInvitation(db: Db, tenantId: string, id: string): Promise<TenantInvitationRow | undefined> {
  const [row] = await db<TenantInvitationRow[]>`select ${db.unsafe(INVITATION)} from tenant_invitations where tenant_id = ${tenantId} and id = ${id}`
  return row
}

export async function revokeTenantInvitationRow(db: Db, tenantId: string, id: string): Promise<TenantInvitationRow | undefined> {
  const [row] = await db<TenantInvitationRow[]>`
    update tenant_invitations set revoked_at = coalesce(revoked_at, now())
     where tenant_id = ${tenantId} and id = ${id} and accepted_at is null
    returning ${db.unsafe(INVITATION)}`
  return row
}

export interface RegistrationInvitationRow {
  id: string
  email: string
  expires_at: Date
  completed_at: Date | null
}

export async function insertRegistrationInvitation(db: Db, r: { email: string; tokenHash: Buffer; days: number }): Promise<RegistrationInvitationRow> {
  const [row] = await db<RegistrationInvitationRow[]>`
    insert into registration_invitations (email, token_hash, expires_at)
    values (${r.email}, ${r.tokenHash}, now() + make_interval(days => ${r.days}))
    returning id, email, expires_at, completed_at`
  return row!
}

export async function findRegistrationInvitation(db: Db, hash: Buffer, lock = false): Promise<RegistrationInvitationRow | undefined> {
  const [row] = await db<RegistrationInvitationRow[]>`
    select id, email, expires_at, completed_at from registration_invitations where token_hash = ${hash} ${lock ? db`for update` : db``}`
  return row
}

export async function markRegistrationCompleted(db: Db, id: string): Promise<void> {
  await db`update registration_invitations set completed_at = now() where id = ${id}`
}
