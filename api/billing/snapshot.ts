// The invoice snapshot: what a period cost, computed from the plan and the period's metered quantities in integers
// only, and hashed over a canonical text so anyone can recompute the hash from the invoice as the API shows it.
import { sha256Hex } from '../platform/crypto'
import { lineAmount, parseUnitPrice } from './money'
import type { Plan } from './price-book'

/** Integers travel as decimal strings: exact, and a byte count may exceed 2^53. */
export interface InvoiceLine {
  kind: 'fee' | 'usage' | 'adjustment'
  meter: string | null
  description: string
  quantity: string
  included: string
  billable: string
  /** Minor units of the currency per `per` units, a decimal with up to 6 fraction digits. */
  unitPrice: string
  per: string
  amount: string
}

export interface InvoiceSnapshot {
  tenantId: string
  subscriptionId: string
  period: string
  periodStart: string
  periodEnd: string
  usageCutoff: string
  planId: string
  currency: string
  lines: InvoiceLine[]
  subtotal: string
  total: string
}

/** What the period's usage source reported, per meter: usage that occurred in the period and was recorded before the
 *  cut-off, and usage of earlier periods recorded after their invoices were cut (the late arrivals). */
export interface PeriodUsage {
  inPeriod: Map<string, bigint>
  late: Map<string, bigint>
}

const microsText = (micros: bigint) => {
  const whole = micros / 1_000_000n
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : whole.toString()
}

/** The fee (nothing while paused: no service was given), a line per priced meter (even at zero, so the bill shows what
 *  was included), and an adjustment line per meter that had late usage. Late usage is billed at this period's unit
 *  price and gets no allowance: its own period's allowance was already applied when that period closed. */
export function invoiceLines(plan: Plan, usage: PeriodUsage, o: { planName: string; chargeFee: boolean }): InvoiceLine[] {
  const fee = BigInt(o.chargeFee ? plan.monthlyFee : 0)
  const lines: InvoiceLine[] = [
    {
      kind: 'fee',
      meter: null,
      description: `${o.planName} plan, monthly fee`,
      quantity: '1',
      included: '0',
      billable: '1',
      unitPrice: fee.toString(),
      per: '1',
      amount: fee.toString(),
    },
  ]
  for (const [meter, price] of Object.entries(plan.meters).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const unit = parseUnitPrice(price.unitPrice)
    const quantity = usage.inPeriod.get(meter) ?? 0n
    const included = BigInt(price.included)
    const billable = quantity > included ? quantity - included : 0n
    const per = BigInt(price.per)
    lines.push({
      kind: 'usage',
      meter,
      description: meter,
      quantity: quantity.toString(),
      included: included.toString(),
      billable: billable.toString(),
      unitPrice: microsText(unit),
      per: per.toString(),
      amount: lineAmount(billable, unit, per).toString(),
    })
  }
  for (const [meter, quantity] of [...usage.late.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (quantity === 0n) continue
    const price = plan.meters[meter]
    const unit = price ? parseUnitPrice(price.unitPrice) : 0n
    const per = BigInt(price?.per ?? 1)
    lines.push({
      kind: 'adjustment',
      meter,
      description: `${meter}, recorded after its period was invoiced`,
      quantity: quantity.toString(),
      included: '0',
      billable: quantity.toString(),
      unitPrice: microsText(unit),
      per: per.toString(),
      amount: lineAmount(quantity, unit, per).toString(),
    })
  }
  return lines
}

export const sumAmounts = (lines: InvoiceLine[]): bigint => lines.reduce((s, l) => s + BigInt(l.amount), 0n)

/** JSON with object keys in code-point order at every depth, no whitespace: one text per snapshot. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}

export const snapshotHash = (s: InvoiceSnapshot): string => sha256Hex(canonicalJson(s))
