// Billing's arithmetic and state table, no server: integer money (prices chosen so floating point gets them wrong),
// the snapshot's lines and hash, the price book's checks, and the one transition table.
import { describe, expect, test } from 'bun:test'
import { formatMinor, lineAmount, minorDigits, parseUnitPrice } from '../../api/billing/money'
import { monthEndAfter, periodLabel } from '../../api/billing/periods'
import { PriceBookSchema } from '../../api/billing/price-book'
import { canonicalJson, invoiceLines, snapshotHash, sumAmounts, type InvoiceSnapshot } from '../../api/billing/snapshot'
import { nextStatus, SUBSCRIPTION_MOVES, SUBSCRIPTION_STATUSES, TRANSITIONS } from '../../api/billing/states'

const plan = (meters: Record<string, { included: number; unitPrice: string; per?: number }>, monthlyFee = 0) => ({
  name: 'P',
  monthlyFee,
  meters: Object.fromEntries(Object.entries(meters).map(([k, v]) => [k, { per: 1, ...v }])),
})
const usage = (inPeriod: Record<string, bigint>, late: Record<string, bigint> = {}) => ({
  inPeriod: new Map(Object.entries(inPeriod)),
  late: new Map(Object.entries(late)),
})

describe('money', () => {
  test('unit prices that floating point gets wrong come out exact', () => {
    // In floating point 1.005 * 100 is 100.49999999999999, which rounds to 100; the amount is 100.5, rounded half up 101.
    expect(Math.round(1.005 * 100)).toBe(100)
    expect(lineAmount(100n, parseUnitPrice('1.005'))).toBe(101n)
    // 0.1 + 0.2 per unit, a million units: floating point says 300000.00000000006 before rounding; exactly 300000 here.
    expect((0.1 + 0.2) * 1_000_000).not.toBe(300_000)
    const lines = invoiceLines(
      plan({ 'a.x': { included: 0, unitPrice: '0.1' }, 'b.y': { included: 0, unitPrice: '0.2' } }),
      usage({ 'a.x': 1_000_000n, 'b.y': 1_000_000n }),
      {
        planName: 'P',
        chargeFee: true,
      },
    )
    expect(lines.map((l) => l.amount)).toEqual(['0', '100000', '200000'])
    expect(sumAmounts(lines)).toBe(300_000n)
    // 0.07 * 100 is 7.000000000000001 in floating point.
    expect(0.07 * 100).not.toBe(7)
    expect(lineAmount(100n, parseUnitPrice('0.07'))).toBe(7n)
    // Byte counts past 2^53 stay exact; a price per 10^9 bytes divides in the same integer step.
    expect(lineAmount(9_007_199_254_740_993n, parseUnitPrice('0.000001'))).toBe(9_007_199_255n)
    expect(lineAmount(9_007_199_254_740_993n, parseUnitPrice('2'), 1_000_000_000n)).toBe(18_014_399n)
  })

  test('unit prices take at most 6 fraction digits; anything else is refused, never rounded', () => {
    expect(parseUnitPrice('0.000001')).toBe(1n)
    expect(parseUnitPrice('150')).toBe(150_000_000n)
    for (const bad of ['0.0000001', '-1', '1e3', '0.1.2', '', ' 1', 'NaN']) expect(() => parseUnitPrice(bad)).toThrow()
  })

  test("minor units follow ISO 4217's digits per currency", () => {
    expect([minorDigits('EUR'), minorDigits('JPY'), minorDigits('KWD')]).toEqual([2, 0, 3])
    expect(formatMinor(123456n, 'EUR')).toBe('1234.56')
    expect(formatMinor(5n, 'EUR')).toBe('0.05')
    expect(formatMinor(5n, 'JPY')).toBe('5')
    expect(formatMinor(-1234n, 'KWD')).toBe('-1.234')
  })
})

describe('invoice lines and the snapshot hash', () => {
  const p = plan({ 'api_requests.session': { included: 1000, unitPrice: '0.1', per: 1000 }, 'edge_package.builds': { included: 2, unitPrice: '150' } }, 49_000)

  test('the allowance is subtracted per meter, the fee is whole, late usage is an adjustment without allowance', () => {
    const lines = invoiceLines(p, usage({ 'edge_package.builds': 5n, 'api_requests.session': 7499n }, { 'edge_package.builds': 1n }), {
      planName: 'Standard',
      chargeFee: true,
    })
    expect(lines).toEqual([
      {
        kind: 'fee',
        meter: null,
        description: 'Standard plan, monthly fee',
        quantity: '1',
        included: '0',
        billable: '1',
        unitPrice: '49000',
        per: '1',
        amount: '49000',
      },
      // 6499 requests over the allowance at 0.1 minor units per 1000: 0.6499, rounded half up per line to 1.
      {
        kind: 'usage',
        meter: 'api_requests.session',
        description: 'api_requests.session',
        quantity: '7499',
        included: '1000',
        billable: '6499',
        unitPrice: '0.1',
        per: '1000',
        amount: '1',
      },
      {
        kind: 'usage',
        meter: 'edge_package.builds',
        description: 'edge_package.builds',
        quantity: '5',
        included: '2',
        billable: '3',
        unitPrice: '150',
        per: '1',
        amount: '450',
      },
      {
        kind: 'adjustment',
        meter: 'edge_package.builds',
        description: 'edge_package.builds, recorded after its period was invoiced',
        quantity: '1',
        included: '0',
        billable: '1',
        unitPrice: '150',
        per: '1',
        amount: '150',
      },
    ])
    expect(sumAmounts(lines)).toBe(49_601n)
  })

  test('a paused period charges no fee', () => {
    expect(invoiceLines(p, usage({}), { planName: 'P', chargeFee: false })[0]!.amount).toBe('0')
  })

  test('the hash covers every field: canonical key order, any change changes it', () => {
    const s: InvoiceSnapshot = {
      tenantId: 't',
      subscriptionId: 's',
      period: '2026-11',
      periodStart: '2026-11-01T00:00:00.000Z',
      periodEnd: '2026-12-01T00:00:00.000Z',
      usageCutoff: '2026-12-01T00:05:00.000Z',
      planId: 'standard',
      currency: 'EUR',
      lines: invoiceLines(p, usage({ 'edge_package.builds': 3n }), { planName: 'P', chargeFee: true }),
      subtotal: '49150',
      total: '49150',
    }
    const reordered = Object.fromEntries(Object.entries(s).reverse()) as unknown as InvoiceSnapshot
    expect(canonicalJson(reordered)).toBe(canonicalJson(s))
    expect(snapshotHash(reordered)).toBe(snapshotHash(s))
    expect(snapshotHash(s)).toMatch(/^[0-9a-f]{64}$/)
    expect(snapshotHash({ ...s, total: '49151' })).not.toBe(snapshotHash(s))
    expect(snapshotHash({ ...s, lines: s.lines.slice(1) })).not.toBe(snapshotHash(s))
  })
})

describe('the price book', () => {
  const book = {
    currency: 'EUR',
    defaultPlan: 'a',
    plans: { a: { name: 'A', monthlyFee: 100, meters: { 'edge_package.builds': { included: 1, unitPrice: '0.5' } } } },
  }
  test('a valid book parses; the shipped one does too', async () => {
    expect(PriceBookSchema.safeParse(book).success).toBe(true)
    expect(PriceBookSchema.safeParse(await Bun.file(new URL('../../api/billing/price-book.json', import.meta.url)).json()).success).toBe(true)
  })
  test('floats, unknown currencies, a missing default plan and over-precise prices are refused', () => {
    const bad = [
      { ...book, currency: 'XXY' },
      { ...book, defaultPlan: 'missing' },
      { ...book, plans: { a: { ...book.plans.a, monthlyFee: 1.5 } } },
      { ...book, plans: { a: { ...book.plans.a, meters: { 'edge_package.builds': { included: 1, unitPrice: 0.5 } } } } },
      { ...book, plans: { a: { ...book.plans.a, meters: { 'edge_package.builds': { included: 1, unitPrice: '0.0000001' } } } } },
      { ...book, extra: true },
      // A meter the platform does not measure, and a price per zero units.
      { ...book, plans: { a: { ...book.plans.a, meters: { 'x.y': { included: 1, unitPrice: '1' } } } } },
      { ...book, plans: { a: { ...book.plans.a, meters: { 'edge_package.builds': { included: 1, unitPrice: '1', per: 0 } } } } },
    ]
    for (const b of bad) expect(PriceBookSchema.safeParse(b).success).toBe(false)
    expect(PriceBookSchema.parse({ ...book, defaultPlan: undefined }).defaultPlan).toBeNull()
  })
})

describe('periods', () => {
  test('calendar months in UTC', () => {
    expect(periodLabel(new Date('2026-11-27T21:00:00Z'))).toBe('2026-11')
    expect(monthEndAfter(new Date('2026-11-27T21:00:00Z')).toISOString()).toBe('2026-12-01T00:00:00.000Z')
    expect(monthEndAfter(new Date('2026-12-01T00:00:00Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z')
  })
})

describe('the transition table', () => {
  test('payment_failed: active → past_due; grace: past_due → unpaid; paid settles both', () => {
    expect(nextStatus('active', 'payment_failed')).toBe('past_due')
    expect(nextStatus('past_due', 'grace_elapsed')).toBe('unpaid')
    expect(nextStatus('past_due', 'paid')).toBe('active')
    expect(nextStatus('unpaid', 'paid')).toBe('active')
  })
  test('canceled is final, unpaid cannot be paused or resumed out of, and only paused resumes', () => {
    for (const move of SUBSCRIPTION_MOVES) expect(nextStatus('canceled', move)).toBeUndefined()
    expect(nextStatus('unpaid', 'pause')).toBeUndefined()
    expect(nextStatus('unpaid', 'resume')).toBeUndefined()
    expect(nextStatus('unpaid', 'change_plan')).toBeUndefined()
    expect(SUBSCRIPTION_STATUSES.filter((s) => nextStatus(s, 'resume') !== undefined)).toEqual(['paused'])
    expect(nextStatus('paused', 'paid')).toBeUndefined()
  })
  test('every target is a status; every row names only known moves', () => {
    for (const [from, row] of Object.entries(TRANSITIONS)) {
      expect(SUBSCRIPTION_STATUSES).toContain(from as never)
      for (const [move, to] of Object.entries(row)) {
        expect(SUBSCRIPTION_MOVES).toContain(move as never)
        expect(SUBSCRIPTION_STATUSES).toContain(to)
      }
    }
  })
})
