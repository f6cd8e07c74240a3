import type { Db } from '../platform/db'

export interface AuthPolicyRow {
  tenant_id: string
  mfa_required: boolean
  allowed_sign_in_methods: string[]
  password_min_length: number
  session_absolute_minutes: number
  session_idle_minutes: number
  sso_enforced: boolean
  allowed_email_domains: string[]
  version: number
  updated_at: Date | null
}

export async function findAuthPolicy(db: Db, tenantId: string): Promise<AuthPolicyRow | undefined> {
  const [row] = await db<AuthPolicyRow[]>`select * from tenant_auth_policies where tenant_id = ${tenantId}`
  return row
}

/** The policies of every tenant where the user is an active member (for the strictest password rule). */
export async function findAuthPoliciesOfUser(db: Db, userId: string): Promise<(AuthPolicyRow & { tenant_id: string })[]> {
  return db<AuthPolicyRow[]>`
    select p.* from memberships m join tenant_auth_policies p on p.tenant_id = m.tenant_id
     where m.user_id = ${userId} and m.status = 'active'`
}

/** Materialises the defaults (version 1) so the versioned UPDATE below has a row to compare against. */
export async function insertDefaultAuthPolicy(db: Db, tenantId: string, d: Omit<AuthPolicyRow, 'tenant_id' | 'version' | 'updated_at'>): Promise<void> {
  await db`
    insert into tenant_auth_policies (tenant_id, mfa_required, allowed_sign_in_methods, password_min_length,
      session_absolute_minutes, session_idle_minutes, sso_enforced, allowed_email_domains, version)
    values (${tenantId}, ${d.mfa_required}, ${d.allowed_sign_in_methods}, ${d.password_min_length},
      ${d.session_absolute_minutes}, ${d.session_idle_minutes}, ${d.sso_enforced}, ${d.allowed_email_domains}, 1)
    on conflict (tenant_id) do nothing`
}

/** The version comparison sits in the UPDATE, so a stale If-Match never writes. */
export async function updateAuthPolicy(
  db: Db,
  tenantId: string,
  expectedVersion: number | null,
  p: Omit<AuthPolicyRow, 'tenant_id' | 'version' | 'updated_at'>,
): Promise<AuthPolicyRow | undefined> {
  const [row] = await db<AuthPolicyRow[]>`
    update tenant_auth_policies
       set mfa_required = ${p.mfa_required}, allowed_sign_in_methods = ${p.allowed_sign_in_methods},
           password_min_length = ${p.password_min_length}, session_absolute_minutes = ${p.session_absolute_minutes},
           session_idle_minutes = ${p.session_idle_minutes}, sso_enforced = ${p.sso_enforced},
           allowed_email_domains = ${p.allowed_email_domains}, version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning *`
  return row
}

/** Policies of tenants that claim an email domain (listed in allowedEmailDomains). */
export async function findAuthPoliciesForDomain(db: Db, domain: string): Promise<AuthPolicyRow[]> {
  return db<AuthPolicyRow[]>`select * from tenant_auth_policies where allowed_email_domains @> array[${domain}]::text[]`
}
