// Subscriptions: read, changed by their billing admins through the state table, moved by payment events and by the
// grace timer. Every change runs in one transaction with its audit entry and its events (the outbox).
import { recordAudit } from '../audit/service'
import { publishEvent } from '../events/service'
import { tenantOf, type ActingContext, type RequestContext } from '../identity/context'
import type { Config } from '../platform/config'
import type { Db, Sql } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { safeEqual, sha256 } from '../platform/crypto'
import { ApiError } from '../platform/errors'
import { staleVersion } from '../platform/etag'
import { announceBlockChange, blockReasons } from './block'
import { periodLabel, monthEndAfter } from './periods'
import { priceBookOf } from './price-book'
import {
  insertSubscription,
  lockSubscription,
  findSubscription,
  markOpenInvoicesPaid,
  updateSubscription,
  type SubscriptionChange,
  type SubscriptionRow,
} from './queries'
import { nextStatus, type SubscriptionMove } from './states'

const HOUR = 3_600_000

export const subscriptionNotFound = () =>
  new ApiError('SUBSCRIPTION_NOT_FOUND', 'This tenant has no subscription: this deployment bills no tenant, or none was created for it')

export function toSubscription(config: Pick<Config, 'BILLING_PRICE_BOOK_FILE' | 'BILLING_GRACE_HOURS'>, r: SubscriptionRow) {
  const book = priceBookOf(config)
  const plan = book.plans[r.plan_id]
  const reasons = blockReasons(r)
  return {
    id: r.id,
    tenantId: r.tenant_id,
    planId: r.plan_id,
    planName: plan?.name ?? null,
    status: r.status,
    currency: book.currency,
    monthlyFee: plan ? String(plan.monthlyFee) : null,
    currentPeriod: { period: periodLabel(r.current_period_start), start: r.current_period_start.toISOString(), end: r.current_period_end.toISOString() },
    cancelAtPeriodEnd: r.cancel_at_period_end,
    pastDueSince: r.past_due_since?.toISOString() ?? null,
    graceEndsAt: r.status === 'past_due' && r.past_due_since ? new Date(r.past_due_since.getTime() + config.BILLING_GRACE_HOURS * HOUR).toISOString() : null,
    canceledAt: r.canceled_at?.toISOString() ?? null,
    billingBlock: { blocked: reasons.length > 0, reasons },
    provider: { name: r.provider, customerRef: r.provider_customer_ref, subscriptionRef: r.provider_subscription_ref },
    version: r.version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }
}

/** In the tenant's creation transaction: its subscription on the price book's default plan, its first period from now
 *  to the end of the month. A price book without a default plan (a deployment that bills no one) creates none. */
export async function subscribeNewTenant(tx: Db, config: Pick<Config, 'BILLING_PRICE_BOOK_FILE'>, ctx: ActingContext, tenantId: string) {
  const plan = priceBookOf(config).defaultPlan
  if (plan === null) return undefined
  const now = new Date()
  const row = await insertSubscription(tx, { tenantId, planId: plan, periodStart: now, periodEnd: monthEndAfter(now) })
  await recordAudit(tx, ctx, { action: 'subscription.created', tenantId, target: { type: 'subscription', id: row.id }, details: { planId: plan } })
  return row
}

export async function getSubscription({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext) {
  const row = await findSubscription(sql, tenantOf(ctx).tenantId)
  if (!row) throw subscriptionNotFound()
  return { subscription: toSubscription(config, row), version: row.version }
}

/** The deployment's price book as a plan change is priced: what the console shows before a billing admin confirms.
 *  The same for every tenant of the deployment; billing:read because only those who pay need it. */
export function priceBookView(config: Pick<Config, 'BILLING_PRICE_BOOK_FILE'>) {
  const book = priceBookOf(config)
  return {
    currency: book.currency,
    defaultPlan: book.defaultPlan,
    plans: Object.entries(book.plans).map(([id, plan]) => ({
      id,
      name: plan.name,
      monthlyFee: String(plan.monthlyFee),
      meters: Object.entries(plan.meters).map(([meter, m]) => ({ meter, included: String(m.included), unitPrice: m.unitPrice, per: String(m.per) })),
    })),
  }
}

const refused = (status: string, move: SubscriptionMove) =>
  new ApiError('BILLING_STATE_TRANSITION_INVALID', `A ${status} subscription cannot ${move.replaceAll('_', ' ')} (docs/api.md "Billing" has the table)`)

/** Applies `moves` in order through the table to the locked row, then writes the result with its audit entry, its
 *  subscription.updated event and, if the block changed, billing.blocked or billing.unblocked. */
async function applyMoves(
  tx: Db,
  ctx: ActingContext,
  current: SubscriptionRow,
  moves: SubscriptionMove[],
  patch: (next: SubscriptionChange) => SubscriptionChange,
): Promise<SubscriptionRow> {
  let status = current.status
  for (const move of moves) {
    const to = nextStatus(status, move)
    if (!to) throw refused(status, move)
    status = to
  }
  const base: SubscriptionChange = {
    planId: current.plan_id,
    status,
    cancelAtPeriodEnd: current.cancel_at_period_end,
    pastDueSince: status === 'past_due' || status === 'unpaid' ? current.past_due_since : null,
    canceledAt: current.canceled_at,
    periodStart: current.current_period_start,
    periodEnd: current.current_period_end,
    operatorBlockedAt: current.operator_blocked_at,
    operatorBlockReason: current.operator_block_reason,
  }
  const next = patch(base)
  const row = await updateSubscription(tx, current.tenant_id, next)
  const changes: Record<string, { before: unknown; after: unknown }> = {}
  if (row.plan_id !== current.plan_id) changes.planId = { before: current.plan_id, after: row.plan_id }
  if (row.status !== current.status) changes.status = { before: current.status, after: row.status }
  if (row.cancel_at_period_end !== current.cancel_at_period_end)
    changes.cancelAtPeriodEnd = { before: current.cancel_at_period_end, after: row.cancel_at_period_end }
  if (Object.keys(changes).length > 0) {
    await recordAudit(tx, ctx, {
      action: 'subscription.updated',
      tenantId: row.tenant_id,
      target: { type: 'subscription', id: row.id },
      changes,
      details: { moves },
    })
    await publishEvent(tx, row.tenant_id, 'subscription.updated', {
      subscriptionId: row.id,
      planId: row.plan_id,
      status: row.status,
      previousStatus: current.status,
      cancelAtPeriodEnd: row.cancel_at_period_end,
    })
  }
  await announceBlockChange(tx, ctx, current, row)
  return row
}

export interface SubscriptionPatch {
  planId?: string
  cancelAtPeriodEnd?: boolean
  status?: 'active' | 'paused'
}

/** If-Match is required: a plan change or a cancel decided on a stale reading would bill for the wrong thing. */
export async function changeSubscription(
  { sql, config }: Pick<ServiceDeps, 'sql' | 'config'>,
  ctx: RequestContext,
  expectedVersion: number | null,
  p: SubscriptionPatch,
) {
  const { tenantId } = tenantOf(ctx)
  if (expectedVersion === null) throw new ApiError('IF_MATCH_INVALID', 'Changing a subscription needs If-Match with the ETag of the subscription you read')
  if (p.planId !== undefined && !(p.planId in priceBookOf(config).plans)) {
    throw new ApiError('VALIDATION_ERROR', `No plan "${p.planId}" in this deployment's price book`, {
      errors: [{ path: 'body.planId', message: 'unknown plan' }],
    })
  }
  const row = await sql.begin(async (tx) => {
    const current = await lockSubscription(tx, tenantId)
    if (!current) throw subscriptionNotFound()
    if (current.version !== expectedVersion) throw staleVersion('subscription')
    const moves: SubscriptionMove[] = []
    if (p.status === 'paused' && current.status !== 'paused') moves.push('pause')
    if (p.status === 'active' && current.status !== 'active') moves.push('resume')
    if (p.planId !== undefined && p.planId !== current.plan_id) moves.push('change_plan')
    if (p.cancelAtPeriodEnd !== undefined && p.cancelAtPeriodEnd !== current.cancel_at_period_end)
      moves.push(p.cancelAtPeriodEnd ? 'schedule_cancel' : 'unschedule_cancel')
    if (moves.length === 0) return current
    return applyMoves(tx, ctx, current, moves, (next) => ({
      ...next,
      planId: p.planId ?? next.planId,
      cancelAtPeriodEnd: p.cancelAtPeriodEnd ?? next.cancelAtPeriodEnd,
    }))
  })
  return { subscription: toSubscription(config, row), version: row.version }
}

/** `paid` settles the debt (past_due or unpaid → active) and every open invoice; `payment_failed` makes an active
 *  subscription past_due and starts the grace period (graceStart says when, for the timer). An operator's block is
 *  not lifted by a payment. */
/** Payment outcomes come from the deployment's provider adapter, which proves itself with BILLING_PROVIDER_KEY; the
 *  tenant's own billing admin holds billing:write too and must not be able to settle its own debt. */
function requireProviderKey(config: Pick<Config, 'BILLING_PROVIDER_KEY'>, presented: string | null): void {
  const expected = config.BILLING_PROVIDER_KEY
  if (!expected || presented === null || !safeEqual(sha256(presented), sha256(expected))) {
    throw new ApiError('FORBIDDEN', "Payment events come from this deployment's payment-provider adapter (X-Billing-Provider-Key)")
  }
}

export async function recordPaymentEvent(
  { sql, config }: Pick<ServiceDeps, 'sql' | 'config'>,
  ctx: RequestContext,
  e: { type: 'paid' | 'payment_failed'; reference?: string },
  providerKey: string | null,
) {
  requireProviderKey(config, providerKey)
  const { tenantId } = tenantOf(ctx)
  const { row, graceStart } = await sql.begin(async (tx) => {
    const current = await lockSubscription(tx, tenantId)
    if (!current) throw subscriptionNotFound()
    const startsGrace = e.type === 'payment_failed' && current.status === 'active'
    const now = new Date()
    const row = await applyMoves(tx, ctx, current, [e.type], (next) => ({
      ...next,
      pastDueSince: e.type === 'paid' ? null : startsGrace ? now : next.pastDueSince,
    }))
    const settled = e.type === 'paid' ? await markOpenInvoicesPaid(tx, tenantId) : 0
    await recordAudit(tx, ctx, {
      action: 'subscription.payment_recorded',
      tenantId,
      target: { type: 'subscription', id: row.id },
      details: { type: e.type, reference: e.reference ?? null, invoicesSettled: settled, status: row.status },
    })
    return { row, graceStart: startsGrace ? row.past_due_since : null }
  })
  return { subscription: toSubscription(config, row), version: row.version, graceStart }
}

/** The grace timer's end: past_due → unpaid, only for the debt that started the timer (a payment and a new failure
 *  since start a new one) and only once the grace period has really passed. Answers whether it moved. */
export async function expireGrace(sql: Sql, config: Pick<Config, 'BILLING_GRACE_HOURS'>, ctx: ActingContext, tenantId: string, pastDueSince: Date) {
  return sql.begin(async (tx) => {
    const current = await lockSubscription(tx, tenantId)
    if (current?.status !== 'past_due' || current.past_due_since?.getTime() !== pastDueSince.getTime()) return false
    if (Date.now() < pastDueSince.getTime() + config.BILLING_GRACE_HOURS * HOUR) return false
    await applyMoves(tx, ctx, current, ['grace_elapsed'], (next) => next)
    return true
  })
}

/** An operator's block (scripts/billing.ts): on or off, with its reason; independent of the status. */
export async function setOperatorBlock(sql: Sql, ctx: ActingContext, tenantId: string, block: { reason: string } | null) {
  return sql.begin(async (tx) => {
    const current = await lockSubscription(tx, tenantId)
    if (!current) throw subscriptionNotFound()
    if (!!current.operator_blocked_at === !!block) return current
    const row = await updateSubscription(tx, tenantId, {
      planId: current.plan_id,
      status: current.status,
      cancelAtPeriodEnd: current.cancel_at_period_end,
      pastDueSince: current.past_due_since,
      canceledAt: current.canceled_at,
      periodStart: current.current_period_start,
      periodEnd: current.current_period_end,
      operatorBlockedAt: block ? new Date() : null,
      operatorBlockReason: block?.reason ?? null,
    })
    await recordAudit(tx, ctx, {
      action: 'subscription.updated',
      tenantId,
      target: { type: 'subscription', id: row.id },
      changes: { operatorBlocked: { before: !!current.operator_blocked_at, after: !!block } },
      details: { reason: block?.reason ?? null },
    })
    await announceBlockChange(tx, ctx, current, row)
    return row
  })
}
