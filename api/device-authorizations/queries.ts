import type { Db } from '../platform/db'

export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'delivered'

export interface DeviceAuthorizationRow {
  id: string
  client_name: string
  scopes: string[]
  client_ip: string | null
  created_at: Date
  expires_at: Date
  interval_seconds: number
  status: DeviceAuthorizationStatus
  user_id: string | null
  membership_id: string | null
}

const COLUMNS = 'id, client_name, scopes, client_ip, created_at, expires_at, interval_seconds, status, user_id, membership_id'

/** undefined when the user code's digest is taken already (a collision of two random codes): the caller draws again. */
export async function insertDeviceAuthorization(
  db: Db,
  a: { deviceCodeHash: Buffer; userCodeHash: Buffer; clientName: string; scopes: string[]; clientIp: string | null; lifetimeSeconds: number; interval: number },
): Promise<DeviceAuthorizationRow | undefined> {
  const [row] = await db<DeviceAuthorizationRow[]>`
    insert into device_authorizations (device_code_hash, user_code_hash, client_name, scopes, client_ip, expires_at, interval_seconds)
    values (${a.deviceCodeHash}, ${a.userCodeHash}, ${a.clientName}, ${a.scopes}, ${a.clientIp},
            now() + make_interval(secs => ${a.lifetimeSeconds}), ${a.interval})
    on conflict (user_code_hash) do nothing
    returning ${db.unsafe(COLUMNS)}`
  return row
}

/** The pending, unexpired authorization a user code names (read by its digest); `lock` holds it for the decision. */
export async function findPendingByUserCode(
  db: Db,
  userCodeHash: Buffer,
  lock = false,
): Promise<(DeviceAuthorizationRow & { user_code_hash: Buffer }) | undefined> {
  const [row] = await db<(DeviceAuthorizationRow & { user_code_hash: Buffer })[]>`
    select ${db.unsafe(COLUMNS)}, user_code_hash from device_authorizations
     where user_code_hash = ${userCodeHash} and status = 'pending' and expires_at > now()
     ${lock ? db`for update` : db``}`
  return row
}

/** A pending authorization's decision, once: false when it was decided (or expired) meanwhile. */
export async function decide(db: Db, id: string, d: { status: 'approved' | 'denied'; userId: string; membershipId: string | null }): Promise<boolean> {
  const rows = await db`
    update device_authorizations set status = ${d.status}, user_id = ${d.userId}, membership_id = ${d.membershipId}, decided_at = now()
     where id = ${id} and status = 'pending' and expires_at > now()
    returning 1`
  return rows.length === 1
}

export interface PollRow extends DeviceAuthorizationRow {
  /** The approved membership's tenant (null while none is approved). */
  tenant_id: string | null
  expired: boolean
  /** This poll came sooner than the interval after the previous one. */
  too_fast: boolean
}

/** One poll, under the row's lock: whether it expired and came too fast, by the database's clock (the one that set
 *  its expiry). The caller records the poll with recordPoll in the same transaction. */
export async function lockForPoll(db: Db, deviceCodeHash: Buffer): Promise<PollRow | undefined> {
  const [row] = await db<PollRow[]>`
    select ${db.unsafe(COLUMNS.replaceAll(/(\w+)/g, 'd.$1'))}, m.tenant_id, d.expires_at <= now() as expired,
           coalesce(now() - d.last_polled_at < make_interval(secs => d.interval_seconds), false) as too_fast
      from device_authorizations d left join memberships m on m.id = d.membership_id
     where d.device_code_hash = ${deviceCodeHash}
       for update of d`
  return row
}

/** Records a poll; `slowDown` adds 5 seconds to the interval (RFC 8628 section 3.5). */
export async function recordPoll(db: Db, id: string, slowDown: boolean): Promise<number> {
  const [row] = await db<{ interval_seconds: number }[]>`
    update device_authorizations
       set last_polled_at = now(), interval_seconds = interval_seconds + ${slowDown ? 5 : 0}
     where id = ${id}
    returning interval_seconds`
  return row!.interval_seconds
}

/** The approved authorization's token has been handed over: the device code is spent. */
export async function markDelivered(db: Db, id: string, apiKeyId: string): Promise<void> {
  await db`update device_authorizations set status = 'delivered', api_key_id = ${apiKeyId}, last_polled_at = now() where id = ${id} and status = 'approved'`
}

/** An approval whose conditions no longer hold at collection: refused for good, so every later poll is access_denied. */
export async function refuseApproved(db: Db, id: string): Promise<void> {
  await db`update device_authorizations set status = 'denied', last_polled_at = now() where id = ${id} and status = 'approved'`
}

/** Housekeeping: one batch of authorizations that can answer nothing more. A delivered or denied one goes once it
 *  expires (its answer was given); a pending or approved one stays `grace` past its expiry, so a late poll is told
 *  expired_token by its own row and support can still see it. */
export async function purgeExpiredAuthorizations(db: Db, grace: string, limit: number): Promise<number> {
  const result = await db`
    delete from device_authorizations where id in (
      select id from device_authorizations
       where expires_at <= now() - ${grace}::interval
          or (status in ('delivered', 'denied') and expires_at <= now())
       limit ${limit} for update skip locked)`
  return result.count
}
