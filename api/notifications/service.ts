// The user's inbox across tenants, and the one way anything notifies a user: `notify(tx, keys, notice)`, inside
// the transaction of the change it reports, so a notification exists exactly when its cause committed. The inbox is
// the user's own: every statement names the user, and an id of anyone else's is the same 404 as an unknown one.
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import type { DerivedKeys } from '../platform/keyring'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { paginate, type PageParams } from '../platform/pagination'
import { logIds, type RequestContext } from '../identity/context'
import { recordAudit } from '../audit/service'
import { enqueueMail, type QueuedMail } from '../mail/service'
import { findUserById } from '../users/queries'
import { isNotificationKind, lineOf, NOTIFICATION_KIND_NAMES, notificationKinds, type NotificationFields, type NotificationKind } from './kinds'
import {
  changeState,
  claimMailSlot,
  findNotification,
  inboxCounts,
  insertNotification,
  insertWatch,
  listNotifications,
  lockInbox,
  mailPreference,
  mailPreferences,
  markSeen,
  readAllUpTo,
  replaceMailPreferences,
  takeWatches,
  type NotificationRow,
  type StateChange,
  type StateFilter,
} from './queries'

export interface Notice<K extends NotificationKind> {
  userId: string
  kind: K
  fields: NotificationFields<K>
  /** Unique per user: a second notice with the same key is dropped (a retried activity, a repeated request). */
  dedupeKey: string
  /** The tenant it is about; null for the account's own. */
  tenantId?: string | null
}

/** Writes the notification in the caller's transaction, and its mail when the user wants this kind mailed and no
 *  mail of the kind went to them in the last hour (database time). Null when the dedupe key was used already. Hand
 *  `mail` to `deps.mail.dispatch` after the commit when there is one; otherwise the mail sweep starts it. */
export async function notify<K extends NotificationKind>(tx: Db, keys: DerivedKeys, n: Notice<K>): Promise<{ id: string; mail: QueuedMail | null } | null> {
  const fields = notificationKinds[n.kind].fields.parse(n.fields) as Record<string, unknown>
  const last = await lockInbox(tx, n.userId)
  const id = await insertNotification(tx, { userId: n.userId, seq: last + 1, tenantId: n.tenantId ?? null, kind: n.kind, fields, dedupeKey: n.dedupeKey })
  if (!id) return null
  return { id, mail: await mailNotice(tx, keys, n.userId, n.kind, fields, n.tenantId ?? null) }
}

/** The mail of a notification just written, if the user's preference and the hourly throttle allow it. */
export async function mailNotice(
  tx: Db,
  keys: DerivedKeys,
  userId: string,
  kind: NotificationKind,
  fields: Record<string, unknown>,
  tenantId: string | null,
): Promise<QueuedMail | null> {
  const wanted = (await mailPreference(tx, userId, kind)) ?? notificationKinds[kind].mailByDefault
  if (!wanted || !(await claimMailSlot(tx, userId, kind))) return null
  const user = await findUserById(tx, userId)
  if (!user) return null
  return enqueueMail(tx, { to: user.email, tenantId, template: 'notification', data: { line: lineOf(kind, fields) } }, keys)
}

/** Mail after the commit of a request's own transaction; failures are the mail sweep's (MailDispatcher logs them). */
export async function dispatchNoticeMail(deps: Pick<ServiceDeps, 'mail'>, ctx: RequestContext | null, notes: ({ mail: QueuedMail | null } | null)[]) {
  const mails = notes.flatMap((n) => (n?.mail ? [n.mail] : []))
  if (mails.length > 0) await deps.mail.dispatch(mails, ctx ? logIds(ctx) : undefined)
}

// ── Work that finishes later ─────────────────────────────────────────────────────────────────────────────────

export type WatchSubject = `edge_package:${string}` | `model_version_validation:${string}`

/** Remembers, in the request's transaction, that this user asked for work that finishes later. */
export const watchFor = (tx: Db, subject: WatchSubject, userId: string, tenantId: string) => insertWatch(tx, { subject, userId, tenantId })

/** Tells everyone watching the subject, once each (the watch goes with the notice), in the finish's transaction. */
export async function notifyWatchers<K extends NotificationKind>(tx: Db, keys: DerivedKeys, subject: WatchSubject, kind: K, fields: NotificationFields<K>) {
  const notes = []
  for (const w of await takeWatches(tx, subject)) {
    notes.push(await notify(tx, keys, { userId: w.user_id, tenantId: w.tenant_id, kind, fields, dedupeKey: `watch:${w.id}` }))
  }
  return notes
}

// ── The inbox ────────────────────────────────────────────────────────────────────────────────────────────────

export type NotificationState = 'unread' | 'read' | 'archived'

const stateOf = (r: NotificationRow): NotificationState => (r.archived_at ? 'archived' : r.read_at ? 'read' : 'unread')

export const toNotificationDto = (r: NotificationRow) => {
  const kind = isNotificationKind(r.kind) ? r.kind : NOTIFICATION_KIND_NAMES[0]
  return {
    id: r.id,
    kind,
    tenantId: r.tenant_id,
    fields: r.fields,
    text: lineOf(kind, r.fields),
    state: stateOf(r),
    createdAt: r.created_at.toISOString(),
    readAt: r.read_at?.toISOString() ?? null,
    archivedAt: r.archived_at?.toISOString() ?? null,
  }
}

const notFound = () => new ApiError('USER_NOTIFICATION_NOT_FOUND', 'No notification with this id in your inbox')

/** Newest first. Without `state`, the inbox: unread and read, not archived. Listing marks seen everything up to the
 *  newest notification the page shows. */
export async function listInbox(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { state?: NotificationState; tenantId?: string },
) {
  const { userId } = ctx.principal
  const state: StateFilter = q.state ?? 'inbox'
  const binding = { route: 'GET /users/me/notifications', scope: `user:${userId}`, filters: { state, tenantId: q.tenantId } }
  const p = await paginate(
    keys,
    binding,
    q,
    (after: { seq: number } | null, limit) => {
      const seq = after?.seq
      // The token is ours (HMAC-checked) but its cursor is read defensively all the same.
      if (after !== null && (typeof seq !== 'number' || !Number.isSafeInteger(seq)))
        throw new ApiError('PAGE_TOKEN_INVALID', 'pageToken is not a token this API issued')
      return listNotifications(sql, userId, { state, tenantId: q.tenantId }, seq ?? null, limit)
    },
    (r) => ({ seq: Number(r.seq) }),
  )
  const newest = p.items[0]
  if (newest) await markSeen(sql, userId, Number(newest.seq))
  return { ...p, items: p.items.map(toNotificationDto) }
}

export const countInbox = ({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext) => inboxCounts(sql, ctx.principal.userId)

export async function changeNotification({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string, change: StateChange) {
  const { userId } = ctx.principal
  if (!isUuid(id)) throw notFound()
  const row = (await changeState(sql, userId, id, change)) ?? (await findNotification(sql, userId, id))
  if (!row) throw notFound()
  return toNotificationDto(row)
}

/** Marks read what is numbered up to the given notification: numbers are given in commit order, so nothing that
 *  arrived after it, however its transaction raced, is marked read unseen. */
export async function readAll({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, upTo: string) {
  const { userId } = ctx.principal
  const row = isUuid(upTo) ? await findNotification(sql, userId, upTo) : undefined
  if (!row) throw notFound()
  return { markedRead: await readAllUpTo(sql, userId, Number(row.seq)), upTo: row.id }
}

// ── Preferences ──────────────────────────────────────────────────────────────────────────────────────────────

export async function getPreferences({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext) {
  const chosen = await mailPreferences(sql, ctx.principal.userId)
  return {
    mail: Object.fromEntries(NOTIFICATION_KIND_NAMES.map((k) => [k, chosen.get(k) ?? notificationKinds[k].mailByDefault])) as Record<NotificationKind, boolean>,
  }
}

/** Replaces the user's choices (a kind not named returns to its default), recorded in the account's trail: turning
 *  off the mail of a new sign-in is what someone holding a stolen session would do. */
export async function putPreferences({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, mail: Partial<Record<NotificationKind, boolean>>) {
  const { userId } = ctx.principal
  const choices = NOTIFICATION_KIND_NAMES.flatMap((kind) => (mail[kind] === undefined ? [] : [{ kind, mail: mail[kind]! }]))
  await sql.begin(async (tx) => {
    const before = await mailPreferences(tx, userId)
    await replaceMailPreferences(tx, userId, choices)
    await recordAudit(tx, ctx, {
      action: 'user.notification_preferences_updated',
      target: { type: 'user', id: userId },
      details: { mail: Object.fromEntries(choices.map((c) => [c.kind, c.mail])), before: Object.fromEntries(before) },
    })
  })
  return getPreferences({ sql }, ctx)
}
