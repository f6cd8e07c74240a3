// notifications, notification_inboxes, notification_preferences, notification_mail_throttle, notification_watches,
// notification_known_clients: every statement that writes them is here. A notification's number is taken while its
// inbox row is locked (migrations/0035_notifications.sql says why), and every change of a read state moves the
// inbox's unread count in the same statement.
import type { Db } from '../platform/db'
import { KNOWN_CLIENT_DAYS, KNOWN_CLIENT_REFRESH_DAYS } from './client-key'

export interface NotificationRow {
  id: string
  user_id: string
  seq: string
  tenant_id: string | null
  kind: string
  fields: Record<string, unknown>
  created_at: Date
  read_at: Date | null
  archived_at: Date | null
}

const COLUMNS = 'id, user_id, seq, tenant_id, kind, fields, created_at, read_at, archived_at'

/** Creates the inbox on first use and holds its row lock until the caller's transaction ends; the last number. */
export async function lockInbox(tx: Db, userId: string): Promise<number> {
  const [row] = await tx<{ last_seq: string }[]>`
    insert into notification_inboxes as i (user_id) values (${userId})
    on conflict (user_id) do update set last_seq = i.last_seq
    returning last_seq`
  return Number(row!.last_seq)
}

/** The next number of a locked inbox; nothing when the (user, dedupe key) pair exists already. */
export async function insertNotification(
  tx: Db,
  n: { userId: string; seq: number; tenantId: string | null; kind: string; fields: Record<string, unknown>; dedupeKey: string },
): Promise<string | undefined> {
  const [row] = await tx<{ id: string }[]>`
    with n as (
      insert into notifications (user_id, seq, tenant_id, kind, fields, dedupe_key)
      values (${n.userId}, ${n.seq}, ${n.tenantId}, ${n.kind}, ${tx.json(n.fields as never)}, ${n.dedupeKey})
      on conflict (user_id, dedupe_key) do nothing
      returning id, seq),
    b as (update notification_inboxes i set last_seq = n.seq, unread_count = i.unread_count + 1 from n where i.user_id = ${n.userId})
    select id from n`
  return row?.id
}

export type StateFilter = 'unread' | 'read' | 'archived' | 'inbox'

const stateCondition = (db: Db, state: StateFilter) =>
  state === 'unread'
    ? db`and read_at is null`
    : state === 'read'
      ? db`and read_at is not null and archived_at is null`
      : state === 'archived'
        ? db`and archived_at is not null`
        : db`and archived_at is null`

/** Newest first on the user's own numbering, which no two notifications of a user share. */
export async function listNotifications(db: Db, userId: string, f: { state: StateFilter; tenantId?: string }, afterSeq: number | null, limit: number) {
  return db<NotificationRow[]>`
    select ${db.unsafe(COLUMNS)} from notifications
     where user_id = ${userId} ${stateCondition(db, f.state)}
       ${f.tenantId ? db`and tenant_id = ${f.tenantId}` : db``}
       ${afterSeq !== null ? db`and seq < ${afterSeq}` : db``}
     order by seq desc
     limit ${limit}`
}

/** Seen: up to the newest number a list showed the user. */
export async function markSeen(db: Db, userId: string, seq: number): Promise<void> {
  await db`update notification_inboxes set seen_seq = greatest(seen_seq, ${seq}) where user_id = ${userId} and seen_seq < ${seq}`
}

export async function inboxCounts(db: Db, userId: string): Promise<{ unread: number; unseen: number }> {
  const [row] = await db<{ unread: string; unseen: string }[]>`
    select unread_count as unread, last_seq - seen_seq as unseen from notification_inboxes where user_id = ${userId}`
  return { unread: Number(row?.unread ?? 0), unseen: Number(row?.unseen ?? 0) }
}

export async function findNotification(db: Db, userId: string, id: string): Promise<NotificationRow | undefined> {
  const [row] = await db<NotificationRow[]>`select ${db.unsafe(COLUMNS)} from notifications where user_id = ${userId} and id = ${id}`
  return row
}

export type StateChange = 'read' | 'unread' | 'archive'

/** One notification's state, and the unread count by what changed, in one statement; the row as it is after. A
 *  repeat changes nothing. Archiving marks read too; unread takes a notification out of the archive. */
export async function changeState(db: Db, userId: string, id: string, change: StateChange): Promise<NotificationRow | undefined> {
  const set =
    change === 'read'
      ? db`read_at = coalesce(n.read_at, now())`
      : change === 'unread'
        ? db`read_at = null, archived_at = null`
        : db`read_at = coalesce(n.read_at, now()), archived_at = coalesce(n.archived_at, now())`
  const [row] = await db<NotificationRow[]>`
    with o as (select id, read_at is null as was_unread from notifications where user_id = ${userId} and id = ${id} for update),
    u as (update notifications n set ${set} from o where n.id = o.id returning ${db.unsafe(
      COLUMNS.split(', ')
        .map((c) => `n.${c}`)
        .join(', '),
    )}, o.was_unread),
    c as (
      update notification_inboxes i
         set unread_count = i.unread_count + (select case when u.was_unread and u.read_at is not null then -1 when not u.was_unread and u.read_at is null then 1 else 0 end from u)
       where i.user_id = ${userId} and exists (select 1 from u))
    select ${db.unsafe(COLUMNS)} from u`
  return row
}

/** Marks read every unread notification of the user numbered up to `seq`; how many. */
export async function readAllUpTo(db: Db, userId: string, seq: number): Promise<number> {
  const [row] = await db<{ n: string }[]>`
    with u as (update notifications set read_at = now() where user_id = ${userId} and seq <= ${seq} and read_at is null returning 1),
    c as (update notification_inboxes set unread_count = unread_count - (select count(*) from u) where user_id = ${userId} and exists (select 1 from u))
    select count(*) as n from u`
  return Number(row!.n)
}

// ── Preferences and the mail throttle ───────────────────────────────────────────────────────────────────────

export async function mailPreferences(db: Db, userId: string): Promise<Map<string, boolean>> {
  const rows = await db<{ kind: string; mail: boolean }[]>`select kind, mail from notification_preferences where user_id = ${userId}`
  return new Map(rows.map((r) => [r.kind, r.mail]))
}

export async function mailPreference(db: Db, userId: string, kind: string): Promise<boolean | undefined> {
  const [row] = await db<{ mail: boolean }[]>`select mail from notification_preferences where user_id = ${userId} and kind = ${kind}`
  return row?.mail
}

/** Replaces the user's choices: a kind not named goes back to its default. */
export async function replaceMailPreferences(tx: Db, userId: string, choices: { kind: string; mail: boolean }[]): Promise<void> {
  await tx`delete from notification_preferences where user_id = ${userId}`
  if (choices.length === 0) return
  await tx`
    insert into notification_preferences (user_id, kind, mail)
    select ${userId}, key, value::boolean from jsonb_each_text(${tx.json(Object.fromEntries(choices.map((c) => [c.kind, c.mail])))})`
}

/** Takes the hour's one mail of this kind for this user, in database time; false while the last one is younger. */
export async function claimMailSlot(tx: Db, userId: string, kind: string): Promise<boolean> {
  const rows = await tx`
    insert into notification_mail_throttle as t (user_id, kind, last_mailed_at) values (${userId}, ${kind}, now())
    on conflict (user_id, kind) do update set last_mailed_at = excluded.last_mailed_at
     where t.last_mailed_at <= now() - interval '1 hour'
    returning 1`
  return rows.length === 1
}

// ── Watches: who is told when work they started finishes ───────────────────────────────────────────────────

export async function insertWatch(tx: Db, w: { subject: string; userId: string; tenantId: string }): Promise<void> {
  await tx`
    insert into notification_watches (subject, user_id, tenant_id) values (${w.subject}, ${w.userId}, ${w.tenantId})
    on conflict (subject, user_id) do nothing`
}

/** The watches of a subject, removed: each is told once. */
export async function takeWatches(tx: Db, subject: string): Promise<{ id: string; user_id: string; tenant_id: string }[]> {
  return tx<{ id: string; user_id: string; tenant_id: string }[]>`
    delete from notification_watches where subject = ${subject} returning id, user_id, tenant_id`
}

// ── The new-client notice: part of the session's own statement (api/sign-in/queries.ts insertSession) ────────

/** CTEs (no leading comma) that record the client as seen and, when the account has signed in before but not from
 *  this client for KNOWN_CLIENT_DAYS, add an account.new_sign_in notification; `nc_note` holds its id. Data-changing
 *  CTEs of one statement all read the state before it, so nc_prior and nc_any see the clients as they were. A client
 *  seen within KNOWN_CLIENT_REFRESH_DAYS keeps its row as it is: rewriting it on every sign-in cost each one a new row
 *  version (bench/README.md "Password sign-in"). */
export const newClientNotice = (db: Db, n: { userId: string; clientKey: string; fields: Record<string, unknown>; dedupeKey: string }) => db`
  nc_prior as (
    select last_seen_at > now() - make_interval(days => ${KNOWN_CLIENT_DAYS}) as recent
      from notification_known_clients where user_id = ${n.userId} and client_key = ${n.clientKey}),
  nc_any as (select 1 from notification_known_clients where user_id = ${n.userId} limit 1),
  nc_seen as (
    insert into notification_known_clients as k (user_id, client_key, last_seen_at) values (${n.userId}, ${n.clientKey}, now())
    on conflict (user_id, client_key) do update set last_seen_at = excluded.last_seen_at
      where k.last_seen_at < now() - make_interval(days => ${KNOWN_CLIENT_REFRESH_DAYS})),
  nc_fresh as (select 1 where exists (select 1 from nc_any) and not exists (select 1 from nc_prior where recent)),
  nc_inbox as (
    insert into notification_inboxes as i (user_id, last_seq, unread_count) select ${n.userId}, 1, 1 from nc_fresh
    on conflict (user_id) do update set last_seq = i.last_seq + 1, unread_count = i.unread_count + 1
    returning last_seq),
  nc_note as (
    insert into notifications (user_id, seq, kind, fields, dedupe_key)
    select ${n.userId}, last_seq, 'account.new_sign_in', ${db.json(n.fields as never)}, ${n.dedupeKey} from nc_inbox
    returning id)`
