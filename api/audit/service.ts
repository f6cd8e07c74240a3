// The one way anything is written to the audit trail. The entry goes into the caller's transaction, so it exists
// exactly when the change it describes committed. Sealing it (migrations/0024) also writes a tenant entry's
// `audit.entry` event, which carries it to the tenant's webhook endpoints (a SIEM receives the trail without
// polling; test/audit/resources.test.ts holds the event to the catalogue's schema and to what the API shows). Who
// acted, from where, and in which request and trace comes from the context alone.
import type { Config } from '../platform/config'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { tenantOf, type ActingContext, type RequestContext } from '../identity/context'
import { auditActions, auditCatalogue, isAccountAction, type AuditAction } from './catalogue'
import {
  appendAuditEntry,
  auditCursorOf,
  chainHead,
  listSubjectAudit,
  listTenantAudit,
  sealAuditChains,
  sealSubjectAudit,
  verifyChain,
  type AuditRow,
  type NewAuditRow,
} from './queries'

export interface AuditTarget {
  type: string
  id: string
}

export interface AuditEntryInput {
  action: AuditAction
  /** The tenant whose log holds it; account actions are never in a tenant's log, whatever is given. */
  tenantId?: string | null
  /** The account the entry is about (its own security activity shows it). */
  subjectUserId?: string | null
  target?: AuditTarget | null
  outcome?: 'success' | 'failure'
  /** A failure's class (invalid_credentials, locked, ...): never what the caller typed. */
  reason?: string | null
  /** A setting's change, field by field. Never a secret: callers pass only what a reviewer may read. */
  changes?: Record<string, { before: unknown; after: unknown }> | null
  /** Non-secret facts about the action (a sign-in's method, a token's scopes). */
  details?: Record<string, unknown> | null
  /** The acting user when the context has no principal yet: a sign-in or registration that just proved who it is. */
  actorUserId?: string
}

function actorOf(ctx: ActingContext, actorUserId: string | undefined): Pick<NewAuditRow, 'actor_type' | 'actor_id' | 'actor_label' | 'credential_id'> {
  if (ctx.system) return { actor_type: 'system', actor_id: ctx.system.workflowId, actor_label: null, credential_id: null }
  const p = ctx.principal
  if (p) {
    const viaKey = p.credential === 'personal_access_token'
    return { actor_type: viaKey ? 'api_key' : 'user', actor_id: p.userId, actor_label: p.label, credential_id: p.credentialId }
  }
  if (actorUserId) return { actor_type: 'user', actor_id: actorUserId, actor_label: null, credential_id: null }
  return { actor_type: 'anonymous', actor_id: null, actor_label: null, credential_id: null }
}

/** Records one entry in `tx` (the change's own transaction; a failure that changes nothing passes the pool). It is
 *  numbered and hashed after that transaction commits, by the sealer or by the first reader of its chain. */
export async function recordAudit(tx: Db, ctx: ActingContext, e: AuditEntryInput): Promise<{ id: string }> {
  return appendAuditEntry(tx, auditRowOf(ctx, e))
}

/** The row recordAudit appends, for a statement that appends it beside the change it describes (queries.ts
 *  auditAppend): the same entry, one round trip fewer. */
export function auditRowOf(ctx: ActingContext, e: AuditEntryInput): NewAuditRow {
  const actor = actorOf(ctx, e.actorUserId)
  const tenantId = isAccountAction(e.action) ? null : (e.tenantId ?? null)
  const subject = e.subjectUserId ?? (isAccountAction(e.action) ? (actor.actor_id && actor.actor_type !== 'system' ? actor.actor_id : null) : null)
  return {
    // Time-ordered (UUIDv7): each new id lands at the right edge of the primary key's index, not on a random page of
    // it. With 2,000,000 entries in the table, a transaction writing one entry cost Postgres 465 µs of CPU against
    // 509 µs with random (v4) ids.
    id: Bun.randomUUIDv7(),
    chain: tenantId ?? subject ?? 'anonymous',
    tenant_id: tenantId,
    subject_user_id: subject,
    ...actor,
    action: e.action,
    target_type: e.target?.type ?? auditCatalogue[e.action].target,
    target_id: e.target?.id ?? null,
    outcome: e.outcome ?? 'success',
    reason: e.reason ?? null,
    ip: ctx.ip,
    user_agent: ctx.userAgent,
    request_id: ctx.requestId,
    trace_id: ctx.traceId,
    changes: e.changes ?? null,
    details: e.details ?? null,
  }
}

/** Only the fields whose values differ, as { field: { before, after } }; null when nothing changed. */
export function changesBetween<T extends Record<string, unknown>>(before: T, after: Partial<T>, fields: readonly (keyof T & string)[]) {
  const out: Record<string, { before: unknown; after: unknown }> = {}
  for (const f of fields) {
    if (!(f in after) || after[f] === undefined) continue
    const b = before[f] ?? null
    const a = after[f] ?? null
    if (JSON.stringify(b) !== JSON.stringify(a)) out[f] = { before: b, after: a }
  }
  return Object.keys(out).length > 0 ? out : null
}

/** An entry as the API, the export and the `audit.entry` event show it. */
export const toAuditEntry = (r: AuditRow) => ({
  id: r.id,
  seq: r.seq,
  occurredAt: r.occurred_at.toISOString(),
  tenantId: r.tenant_id,
  actor: { type: r.actor_type, id: r.actor_id, label: r.actor_label, credentialId: r.credential_id },
  action: r.action,
  target: r.target_type ? { type: r.target_type, id: r.target_id } : null,
  outcome: r.outcome,
  reason: r.reason,
  ip: r.ip,
  userAgent: r.user_agent,
  requestId: r.request_id,
  changes: r.changes,
  details: r.details,
  hash: r.hash.toString('hex'),
})

const DAY_MS = 86_400_000
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i
/** Postgres holds no time before year 1 (there is no year 0), though the RFC 3339 pattern and a JS Date admit one. */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z')

/** The window every audit read names: both ends required, parsable, in order, and no longer than the maximum. */
export function timeRange(config: Pick<Config, 'AUDIT_LOG_MAX_WINDOW_DAYS'>, q: { from?: string; to?: string }, maxDays = config.AUDIT_LOG_MAX_WINDOW_DAYS) {
  if (q.from === undefined || q.to === undefined) {
    throw new ApiError('AUDIT_LOG_TIME_RANGE_REQUIRED', 'Name the window: from and to (RFC 3339 times)')
  }
  const from = RFC3339.test(q.from) ? new Date(q.from) : null
  const to = RFC3339.test(q.to) ? new Date(q.to) : null
  if (!from || !to || Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || from.getTime() < EARLIEST || from.getTime() >= to.getTime()) {
    throw new ApiError('AUDIT_LOG_INVALID_TIME_RANGE', 'from and to must be RFC 3339 times with from before to')
  }
  if (to.getTime() - from.getTime() > maxDays * DAY_MS) {
    throw new ApiError('AUDIT_LOG_WINDOW_TOO_LARGE', `The window may span at most ${maxDays} days; page through shorter ones or export`)
  }
  return { from, to }
}

type ListQuery = PageParams & {
  from?: string
  to?: string
  actorId?: string
  action?: string
  targetType?: string
  targetId?: string
  outcome?: 'success' | 'failure'
}

/** The current tenant's trail, newest first; page tokens are bound to the window and every filter. */
export async function listTenantAuditLog({ sql, keys, config }: Pick<ServiceDeps, 'sql' | 'keys' | 'config'>, ctx: RequestContext, q: ListQuery) {
  const tenantId = tenantOf(ctx).tenantId
  const { from, to } = timeRange(config, q)
  const filter = {
    tenantId,
    from,
    to,
    actorId: q.actorId,
    actionPrefix: q.action,
    targetType: q.targetType,
    targetId: q.targetId,
    outcome: q.outcome,
  }
  const binding = {
    route: 'GET /tenants/current/audit-log',
    scope: `tenant:${tenantId}`,
    filters: { ...filter, from: from.toISOString(), to: to.toISOString() },
  }
  await sealAuditChains(sql, [tenantId])
  const p = await paginate(keys, binding, q, (after, limit) => listTenantAudit(sql, filter, after, limit), auditCursorOf)
  return mapPage(p, toAuditEntry)
}

/** Recomputes the current tenant's chain over a window (verifications may span the whole retention period). */
export async function verifyTenantAuditLog({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, body: { from?: string; to?: string }) {
  const tenantId = tenantOf(ctx).tenantId
  const { from, to } = timeRange(config, body, config.AUDIT_RETENTION_DAYS + 1)
  await sealAuditChains(sql, [tenantId])
  const [check, head] = await Promise.all([verifyChain(sql, tenantId, from, to), chainHead(sql, tenantId)])
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    verified: check.verified,
    firstSeq: check.first_seq,
    lastSeq: check.last_seq,
    intact: check.first_broken_seq === null,
    firstBrokenSeq: check.first_broken_seq,
    head: head ? { seq: head.seq, hash: head.hash?.toString('hex') ?? null } : null,
  }
}

/** The actions a user's own security activity shows: every account action, and the tenant actions about their
 *  credentials (their tokens created or revoked, their account provisioned or given a membership by single sign-on). */
const SECURITY_ACTIVITY_ACTIONS: readonly AuditAction[] = [
  ...auditActions.filter(isAccountAction),
  'user.provisioned',
  'membership.sso_provisioned',
  'api_key.created',
  'api_key.revoked',
  'api_key.revoked_by_admin',
  'api_key.member_keys_revoked',
]

export async function listSecurityActivity({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, q: PageParams) {
  const userId = ctx.principal.userId
  const binding = { route: 'GET /users/me/security-activity', scope: `user:${userId}`, filters: {} }
  await sealSubjectAudit(sql, userId)
  const p = await paginate(keys, binding, q, (after, limit) => listSubjectAudit(sql, userId, SECURITY_ACTIVITY_ACTIONS, after, limit), auditCursorOf)
  return mapPage(p, toAuditEntry)
}
