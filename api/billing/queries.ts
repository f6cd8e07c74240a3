import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import type { InvoiceLine } from './snapshot'
import type { SubscriptionStatus } from './states'

export interface SubscriptionRow {
  id: string
  tenant_id: string
  plan_id: string
  status: SubscriptionStatus
  current_period_start: Date
  current_period_end: Date
  cancel_at_period_end: boolean
  past_due_since: Date | null
  canceled_at: Date | null
  operator_blocked_at: Date | null
  operator_block_reason: string | null
  provider: string | null
  provider_customer_ref: string | null
  provider_subscription_ref: string | null
  version: number
  created_at: Date
  updated_at: Date
}

const SUB = `id, tenant_id, plan_id, status, current_period_start, current_period_end, cancel_at_period_end, past_due_since, canceled_at,
  operator_blocked_at, operator_block_reason, provider, provider_customer_ref, provider_subscription_ref, version, created_at, updated_at`

export async function insertSubscription(db: Db, s: { tenantId: string; planId: string; periodStart: Date; periodEnd: Date }): Promise<SubscriptionRow> {
  const [row] = await db<SubscriptionRow[]>`
    insert into subscriptions (tenant_id, plan_id, status, current_period_start, current_period_end)
    values (${s.tenantId}, ${s.planId}, 'active', ${s.periodStart}, ${s.periodEnd})
    returning ${db.unsafe(SUB)}`
  return row!
}

export async function findSubscription(db: Db, tenantId: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db<SubscriptionRow[]>`select ${db.unsafe(SUB)} from subscriptions where tenant_id = ${tenantId}`
  return row
}

/** The row, locked until the caller's transaction ends: every change decides on what it read. */
export async function lockSubscription(db: Db, tenantId: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db<SubscriptionRow[]>`select ${db.unsafe(SUB)} from subscriptions where tenant_id = ${tenantId} for update`
  return row
}

export interface SubscriptionChange {
  planId: string
  status: SubscriptionStatus
  cancelAtPeriodEnd: boolean
  pastDueSince: Date | null
  canceledAt: Date | null
  periodStart: Date
  periodEnd: Date
  operatorBlockedAt: Date | null
  operatorBlockReason: string | null
}

export async function updateSubscription(db: Db, tenantId: string, c: SubscriptionChange): Promise<SubscriptionRow> {
  const [row] = await db<SubscriptionRow[]>`
    update subscriptions set plan_id = ${c.planId}, status = ${c.status}, cancel_at_period_end = ${c.cancelAtPeriodEnd},
           past_due_since = ${c.pastDueSince}, canceled_at = ${c.canceledAt}, current_period_start = ${c.periodStart},
           current_period_end = ${c.periodEnd}, operator_blocked_at = ${c.operatorBlockedAt},
           operator_block_reason = ${c.operatorBlockReason}, version = version + 1, updated_at = now()
     where tenant_id = ${tenantId}
    returning ${db.unsafe(SUB)}`
  return row!
}

/** Subscriptions whose current period has ended, oldest end first: the sweep closes each. */
export async function subscriptionsWithEndedPeriods(db: Db, now: Date, limit: number): Promise<{ tenant_id: string; current_period_start: Date }[]> {
  return db`
    select tenant_id, current_period_start from subscriptions
     where status <> 'canceled' and current_period_end <= ${now} order by current_period_end limit ${limit}`
}

/** past_due subscriptions whose first failed payment is older than the grace period. */
export async function subscriptionsPastGrace(db: Db, before: Date, limit: number): Promise<{ tenant_id: string; past_due_since: Date }[]> {
  return db`
    select tenant_id, past_due_since from subscriptions
     where status = 'past_due' and past_due_since <= ${before} order by past_due_since limit ${limit}`
}

/** Just the fields the billing block reads, by the tenant's primary key: the new-work gate asks it often. */
export async function findBlockFields(
  db: Db,
  tenantId: string,
): Promise<{ status: SubscriptionStatus; operator_blocked_at: Date | null; operator_block_reason: string | null } | undefined> {
  const [row] = await db<{ status: SubscriptionStatus; operator_blocked_at: Date | null; operator_block_reason: string | null }[]>`
    select status, operator_blocked_at, operator_block_reason from subscriptions where tenant_id = ${tenantId}`
  return row
}

export interface InvoiceRow {
  id: string
  tenant_id: string
  subscription_id: string
  period: string
  period_start: Date
  period_end: Date
  usage_cutoff: Date
  plan_id: string
  currency: string
  lines: InvoiceLine[]
  subtotal: string
  total: string
  hash: string
  status: 'open' | 'paid' | 'void'
  created_at: Date
  paid_at: Date | null
  provider_invoice_ref: string | null
}

const INV = `id, tenant_id, subscription_id, period, period_start, period_end, usage_cutoff, plan_id, currency, lines, subtotal::text,
  total::text, hash, status, created_at, paid_at, provider_invoice_ref`

const INV_JOINED = INV.split(',')
  .map((c) => `i.${c.trim()}`)
  .join(', ')

export interface NewInvoice {
  tenantId: string
  subscriptionId: string
  period: string
  periodStart: Date
  periodEnd: Date
  usageCutoff: Date
  planId: string
  currency: string
  lines: InvoiceLine[]
  subtotal: bigint
  total: bigint
  hash: string
}

/** undefined when the subscription already has a snapshot for the period (the unique index decides, so two closes
 *  racing leave exactly one). */
export async function insertInvoice(db: Db, i: NewInvoice): Promise<InvoiceRow | undefined> {
  const [row] = await db<InvoiceRow[]>`
    insert into invoices (tenant_id, subscription_id, period, period_start, period_end, usage_cutoff, plan_id, currency, lines, subtotal, total, hash)
    values (${i.tenantId}, ${i.subscriptionId}, ${i.period}, ${i.periodStart}, ${i.periodEnd}, ${i.usageCutoff}, ${i.planId}, ${i.currency},
            ${db.json(i.lines as never)}, ${i.subtotal.toString()}, ${i.total.toString()}, ${i.hash})
    on conflict (subscription_id, period) do nothing
    returning ${db.unsafe(INV)}`
  return row
}

export async function findInvoice(db: Db, tenantId: string, id: string): Promise<InvoiceRow | undefined> {
  const [row] = await db<InvoiceRow[]>`select ${db.unsafe(INV)} from invoices where tenant_id = ${tenantId} and id = ${id}`
  return row
}

export async function findInvoiceForPeriod(db: Db, subscriptionId: string, period: string): Promise<InvoiceRow | undefined> {
  const [row] = await db<InvoiceRow[]>`select ${db.unsafe(INV)} from invoices where subscription_id = ${subscriptionId} and period = ${period}`
  return row
}

/** The cut-off of the subscription's latest invoice: usage recorded since belongs to the next one. */
export async function latestUsageCutoff(db: Db, subscriptionId: string): Promise<Date | undefined> {
  const [row] = await db<{ usage_cutoff: Date }[]>`
    select usage_cutoff from invoices where subscription_id = ${subscriptionId} order by period_end desc limit 1`
  return row?.usage_cutoff
}

export async function listInvoices(db: Db, tenantId: string, after: CreatedCursor | null, limit: number) {
  return db<(InvoiceRow & { cursor_at: string })[]>`
    select ${db.unsafe(INV)}, ${db.unsafe(CURSOR_AT)} from invoices
     where tenant_id = ${tenantId} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc limit ${limit}`
}

/** A payment settles every open invoice of the tenant. */
export async function markOpenInvoicesPaid(db: Db, tenantId: string): Promise<number> {
  const rows = await db`update invoices set status = 'paid', paid_at = now() where tenant_id = ${tenantId} and status = 'open' returning 1`
  return rows.length
}

/** The invoice and its tenant's name, for the rendered page. */
export async function findInvoiceForPage(db: Db, tenantId: string, id: string): Promise<(InvoiceRow & { tenant_name: string }) | undefined> {
  const [row] = await db<(InvoiceRow & { tenant_name: string })[]>`
    select ${db.unsafe(INV_JOINED)}, t.name as tenant_name
      from invoices i join tenants t on t.id = i.tenant_id where i.tenant_id = ${tenantId} and i.id = ${id}`
  return row
}
