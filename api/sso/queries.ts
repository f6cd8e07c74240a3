import type { Db } from '../platform/db'
import type { SealedColumn } from '../platform/keyring'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export interface SsoConnectionRow {
  id: string
  tenant_id: string
  protocol: 'oidc'
  name: string
  issuer: string
  client_id: string
  client_secret_sealed: Buffer
  email_domains: string[]
  default_role: 'admin' | 'researcher' | 'billing_admin' | 'viewer'
  enabled: boolean
  version: number
  created_at: Date
  updated_at: Date
}

export async function insertSsoConnection(
  db: Db,
  c: {
    tenantId: string
    name: string
    issuer: string
    clientId: string
    sealedSecret: Buffer
    emailDomains: string[]
    defaultRole: string
    enabled: boolean
  },
): Promise<SsoConnectionRow> {
  const [row] = await db<SsoConnectionRow[]>`
    insert into sso_connections (tenant_id, name, issuer, client_id, client_secret_sealed, email_domains, default_role, enabled)
    values (${c.tenantId}, ${c.name}, ${c.issuer}, ${c.clientId}, ${c.sealedSecret}, ${c.emailDomains}, ${c.defaultRole}, ${c.enabled})
    returning *`
  return row!
}

export async function listSsoConnections(db: Db, tenantId: string, after: CreatedCursor | null, limit: number) {
  return db<(SsoConnectionRow & { cursor_at: string })[]>`
    select *, ${db.unsafe(CURSOR_AT)}
      from sso_connections
     where tenant_id = ${tenantId} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** By id alone for the sign-in start (the connection names its tenant); by tenant and id for administration. */
export async function findSsoConnection(db: Db, id: string, tenantId?: string): Promise<SsoConnectionRow | undefined> {
  const [row] = await db<SsoConnectionRow[]>`
    select * from sso_connections where id = ${id} and (${tenantId ?? null}::uuid is null or tenant_id = ${tenantId ?? null})`
  return row
}

/** The version comparison sits in the UPDATE itself, so a stale If-Match never writes. */
export async function updateSsoConnection(
  db: Db,
  tenantId: string,
  id: string,
  expectedVersion: number | null,
  c: {
    name?: string
    issuer?: string
    clientId?: string
    sealedSecret?: Buffer
    emailDomains?: string[]
    defaultRole?: string
    enabled?: boolean
  },
): Promise<SsoConnectionRow | undefined> {
  const [row] = await db<SsoConnectionRow[]>`
    update sso_connections
       set name = coalesce(${c.name ?? null}, name), issuer = coalesce(${c.issuer ?? null}, issuer),
           client_id = coalesce(${c.clientId ?? null}, client_id),
           client_secret_sealed = coalesce(${c.sealedSecret ?? null}::bytea, client_secret_sealed),
           email_domains = coalesce(${c.emailDomains ?? null}::text[], email_domains),
           default_role = coalesce(${c.defaultRole ?? null}, default_role), enabled = coalesce(${c.enabled ?? null}::boolean, enabled),
           version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and (${expectedVersion}::bigint is null or version = ${expectedVersion})
    returning *`
  return row
}

export interface LoginStateRow {
  connection_id: string
  nonce: string
  code_verifier: string
  return_to: string | null
  link_user_id: string | null
  expires_at: Date
}

export async function insertLoginState(
  db: Db,
  s: {
    stateHash: Buffer
    connectionId: string
    nonce: string
    codeVerifier: string
    returnTo: string | null
    linkUserId: string | null
    ttlSeconds: number
  },
): Promise<void> {
  await db`
    insert into sso_login_states (state_hash, connection_id, nonce, code_verifier, return_to, link_user_id, expires_at)
    values (${s.stateHash}, ${s.connectionId}, ${s.nonce}, ${s.codeVerifier}, ${s.returnTo}, ${s.linkUserId}, now() + make_interval(secs => ${s.ttlSeconds}))`
}

/** Single use: the row is deleted as it is read. */
export async function takeLoginState(db: Db, stateHash: Buffer): Promise<LoginStateRow | undefined> {
  const [row] = await db<LoginStateRow[]>`
    delete from sso_login_states where state_hash = ${stateHash}
    returning connection_id, nonce, code_verifier, return_to, link_user_id, expires_at`
  return row
}

export async function findIdentityUser(db: Db, connectionId: string, subject: string): Promise<string | undefined> {
  const [row] = await db<{ user_id: string }[]>`select user_id from sso_identities where connection_id = ${connectionId} and subject = ${subject}`
  return row?.user_id
}

/** The new link's id; undefined when (connection, subject) was linked already. */
export async function linkIdentity(db: Db, connectionId: string, subject: string, userId: string): Promise<string | undefined> {
  const [row] = await db<{ id: string }[]>`
    insert into sso_identities (connection_id, subject, user_id) values (${connectionId}, ${subject}, ${userId}) on conflict do nothing returning id`
  return row?.id
}

/** Enabled connections that claim an email domain explicitly (an empty domain list admits any address at sign-in,
 *  but offering it to every domain on the sign-in page would advertise the tenant to strangers). */
export async function findEnabledConnectionsForDomain(db: Db, domain: string): Promise<{ id: string; name: string; tenant_id: string }[]> {
  return db<{ id: string; name: string; tenant_id: string }[]>`
    select id, name, tenant_id from sso_connections
     where enabled and ${domain} = any (email_domains)
     order by created_at, id`
}

export interface SsoIdentityRow {
  id: string
  connection_id: string
  connection_name: string
  tenant_id: string
  subject: string
  created_at: Date
}

const IDENTITY_COLUMNS = `i.id, i.connection_id, c.name as connection_name, c.tenant_id, i.subject, i.created_at`

export async function listUserIdentities(db: Db, userId: string, after: CreatedCursor | null, limit: number) {
  return db<(SsoIdentityRow & { cursor_at: string })[]>`
    select *, ${db.unsafe(CURSOR_AT)}
      from (select ${db.unsafe(IDENTITY_COLUMNS)} from sso_identities i join sso_connections c on c.id = i.connection_id
             where i.user_id = ${userId}) mine
     where true ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

export async function deleteUserIdentity(db: Db, userId: string, id: string): Promise<SsoIdentityRow | undefined> {
  const [row] = await db<SsoIdentityRow[]>`
    with gone as (delete from sso_identities where user_id = ${userId} and id = ${id} returning *)
    select ${db.unsafe(IDENTITY_COLUMNS)} from gone i join sso_connections c on c.id = i.connection_id`
  return row
}

/** SSO client secrets, for the re-seal (activities/reseal-batch.ts). Not a change of the connection: its version
 *  stays. */
export const ssoClientSecrets: SealedColumn = {
  name: 'sso_connections.client_secret_sealed',
  purpose: 'secrets',
  batch: (db, after, limit) => db<{ id: string; sealed: Buffer }[]>`
    select id::text as id, client_secret_sealed as sealed from sso_connections
     where ${after}::uuid is null or id > ${after}::uuid order by id limit ${limit}`,
  replace: async (db, id, from, to) =>
    (await db`update sso_connections set client_secret_sealed = ${to} where id = ${id} and client_secret_sealed = ${from}`).count === 1,
}

/** A tenant being deleted signs no one in again; returns how many connections were enabled. */
export async function disableTenantSsoConnections(db: Db, tenantId: string): Promise<number> {
  const rows = await db`update sso_connections set enabled = false, updated_at = now() where tenant_id = ${tenantId} and enabled returning 1`
  return rows.length
}

/** Every linked identity of a user (account erasure); returns how many. */
export async function deleteUserIdentities(db: Db, userId: string): Promise<number> {
  const rows = await db`delete from sso_identities where user_id = ${userId} returning 1`
  return rows.length
}
