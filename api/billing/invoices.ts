// Invoices: the period close that writes a subscription's snapshot for an ended period, and the reads. The close
// runs in one transaction on the locked subscription: the snapshot, the move to the next period (or to canceled),
// their events and audit entries commit together or not at all, and the unique (subscription, period) index leaves
// exactly one snapshot however many closes race.
import { recordAudit } from '../audit/service'
import { publishEvent } from '../events/service'
import { tenantOf, type ActingContext, type RequestContext } from '../identity/context'
import type { Config } from '../platform/config'
import type { Sql } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { announceBlockChange } from './block'
import { monthEndAfter, periodLabel } from './periods'
import { priceBookOf } from './price-book'
import { renderInvoiceHtml } from './render'
import {
  findInvoice,
  findInvoiceForPage,
  findInvoiceForPeriod,
  insertInvoice,
  latestUsageCutoff,
  listInvoices,
  lockSubscription,
  updateSubscription,
  type InvoiceRow,
} from './queries'
import { subscriptionNotFound } from './service'
import { invoiceLines, snapshotHash, sumAmounts, type InvoiceSnapshot } from './snapshot'
import { nextStatus } from './states'
import { periodUsage } from './usage-source'

/** The snapshot the hash covers, rebuilt from a stored row (a test and a customer can recompute it). */
export const snapshotOf = (r: InvoiceRow): InvoiceSnapshot => ({
  tenantId: r.tenant_id,
  subscriptionId: r.subscription_id,
  period: r.period,
  periodStart: r.period_start.toISOString(),
  periodEnd: r.period_end.toISOString(),
  usageCutoff: r.usage_cutoff.toISOString(),
  planId: r.plan_id,
  currency: r.currency,
  lines: r.lines,
  subtotal: r.subtotal,
  total: r.total,
})

export const toInvoice = (r: InvoiceRow) => ({
  id: r.id,
  ...snapshotOf(r),
  hash: r.hash,
  status: r.status,
  finalizedAt: r.created_at.toISOString(),
  paidAt: r.paid_at?.toISOString() ?? null,
  provider: { invoiceRef: r.provider_invoice_ref },
})

export type CloseOutcome =
  | { outcome: 'finalized'; invoice: InvoiceRow }
  | { outcome: 'exists'; invoice: InvoiceRow }
  | { outcome: 'not_due'; periodEnd: Date | null }
  | { outcome: 'no_subscription' }

/** Error types the close reports to its workflow (names only: activities never see ApiError). */
export class PlanNotInPriceBook extends Error {
  override name = 'PlanNotInPriceBook'
}

/** Closes `period` of the tenant's subscription if it is the current one and has ended: usage that occurred in it and
 *  was recorded until now, plus what arrived late for earlier periods, priced with the plan as it stands. */
export async function closePeriod(
  sql: Sql,
  config: Pick<Config, 'BILLING_PRICE_BOOK_FILE'>,
  ctx: ActingContext,
  tenantId: string,
  period: string,
): Promise<CloseOutcome> {
  return sql.begin(async (tx): Promise<CloseOutcome> => {
    const sub = await lockSubscription(tx, tenantId)
    if (!sub) return { outcome: 'no_subscription' }
    const existing = await findInvoiceForPeriod(tx, sub.id, period)
    if (existing) return { outcome: 'exists', invoice: existing }
    const now = new Date()
    if (periodLabel(sub.current_period_start) !== period || sub.current_period_end > now || sub.status === 'canceled') {
      return { outcome: 'not_due', periodEnd: periodLabel(sub.current_period_start) === period ? sub.current_period_end : null }
    }
    const book = priceBookOf(config)
    const plan = book.plans[sub.plan_id]
    if (!plan) throw new PlanNotInPriceBook(`Plan "${sub.plan_id}" of tenant ${tenantId} is not in the price book`)
    // The cut-off is the transaction's own clock reading, after the lock: usage written later is the next invoice's.
    const usage = await periodUsage(tx, {
      tenantId,
      periodStart: sub.current_period_start,
      periodEnd: sub.current_period_end,
      cutoff: now,
      previousCutoff: (await latestUsageCutoff(tx, sub.id)) ?? null,
    })
    const lines = invoiceLines(plan, usage, { planName: plan.name, chargeFee: sub.status !== 'paused' })
    const subtotal = sumAmounts(lines)
    const snapshot: InvoiceSnapshot = {
      tenantId,
      subscriptionId: sub.id,
      period,
      periodStart: sub.current_period_start.toISOString(),
      periodEnd: sub.current_period_end.toISOString(),
      usageCutoff: now.toISOString(),
      planId: sub.plan_id,
      currency: book.currency,
      lines,
      subtotal: subtotal.toString(),
      total: subtotal.toString(),
    }
    const invoice = await insertInvoice(tx, {
      tenantId,
      subscriptionId: sub.id,
      period,
      periodStart: sub.current_period_start,
      periodEnd: sub.current_period_end,
      usageCutoff: now,
      planId: sub.plan_id,
      currency: book.currency,
      lines,
      subtotal,
      total: subtotal,
      hash: snapshotHash(snapshot),
    })
    if (!invoice) return { outcome: 'exists', invoice: (await findInvoiceForPeriod(tx, sub.id, period))! }
    const canceling = sub.cancel_at_period_end && nextStatus(sub.status, 'period_end_cancel') === 'canceled'
    const row = await updateSubscription(tx, tenantId, {
      planId: sub.plan_id,
      status: canceling ? 'canceled' : sub.status,
      cancelAtPeriodEnd: sub.cancel_at_period_end,
      pastDueSince: canceling ? null : sub.past_due_since,
      canceledAt: canceling ? sub.current_period_end : sub.canceled_at,
      periodStart: sub.current_period_end,
      periodEnd: monthEndAfter(sub.current_period_end),
      operatorBlockedAt: sub.operator_blocked_at,
      operatorBlockReason: sub.operator_block_reason,
    })
    await publishEvent(tx, tenantId, 'invoice.finalized', {
      invoiceId: invoice.id,
      period,
      currency: invoice.currency,
      total: invoice.total,
      hash: invoice.hash,
    })
    await recordAudit(tx, ctx, {
      action: 'invoice.finalized',
      tenantId,
      target: { type: 'invoice', id: invoice.id },
      details: { period, total: invoice.total, currency: invoice.currency, hash: invoice.hash },
    })
    if (canceling) {
      await publishEvent(tx, tenantId, 'subscription.updated', {
        subscriptionId: row.id,
        planId: row.plan_id,
        status: row.status,
        previousStatus: sub.status,
        cancelAtPeriodEnd: row.cancel_at_period_end,
      })
      await recordAudit(tx, ctx, {
        action: 'subscription.updated',
        tenantId,
        target: { type: 'subscription', id: row.id },
        changes: { status: { before: sub.status, after: row.status } },
        details: { moves: ['period_end_cancel'] },
      })
      await announceBlockChange(tx, ctx, sub, row)
    }
    return { outcome: 'finalized', invoice }
  })
}

/** POST …/invoices: closes the current period now that it has ended (what the schedule does, for a billing admin who
 *  will not wait for it). A period already closed is 409; one that has not ended, or is not the current one, is 400. */
export async function closePeriodNow({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, period: string) {
  const { tenantId } = tenantOf(ctx)
  const closed = await closePeriod(sql, config, ctx, tenantId, period)
  if (closed.outcome === 'no_subscription') throw subscriptionNotFound()
  if (closed.outcome === 'exists') throw new ApiError('INVOICE_SNAPSHOT_ALREADY_EXISTS', `The invoice of ${period} exists already (${closed.invoice.id})`)
  if (closed.outcome === 'not_due') {
    const why = closed.periodEnd ? `it ends at ${closed.periodEnd.toISOString()}` : 'it is not the current period of the subscription'
    throw new ApiError('VALIDATION_ERROR', `${period} cannot be closed: ${why}`, { errors: [{ path: 'body.period', message: 'not an ended current period' }] })
  }
  return toInvoice(closed.invoice)
}

const invoiceNotFound = () => new ApiError('NOT_FOUND', 'No invoice with this id in the current tenant')

export async function getInvoiceRow({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  const row = isUuid(id) ? await findInvoice(sql, tenantId, id) : undefined
  if (!row) throw invoiceNotFound()
  return row
}

export const getInvoice = async (deps: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) => toInvoice(await getInvoiceRow(deps, ctx, id))

export async function listTenantInvoices({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, q: PageParams) {
  const { tenantId } = tenantOf(ctx)
  const binding = { route: 'GET /tenants/current/invoices', scope: `tenant:${tenantId}`, filters: {} }
  const p = await paginate(keys, binding, q, (after, limit) => listInvoices(sql, tenantId, after, limit), createdCursorOf)
  return mapPage(p, toInvoice)
}

export async function renderInvoicePage({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string): Promise<string> {
  const { tenantId } = tenantOf(ctx)
  const row = isUuid(id) ? await findInvoiceForPage(sql, tenantId, id) : undefined
  if (!row) throw invoiceNotFound()
  return renderInvoiceHtml(row, row.tenant_name)
}
