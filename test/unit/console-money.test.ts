// The console's money (api/console/ui/money.ts), no server: what the Subscription page shows before a plan change is
// the integer the period close will bill (the same rule as api/billing/money.ts, on prices floating point gets wrong),
// and amounts past 2^53 are formatted exactly.
import { describe, expect, test } from 'bun:test'
import { lineAmount, parseUnitPrice } from '../../api/billing/money'
import { formatMoney, formatQuantity, meterCharge, unitPriceMicros } from '../../api/console/ui/money'

describe("the console's money", () => {
  test("a meter's charge is the invoice's line amount, on prices floating point gets wrong", () => {
    const cases: [quantity: bigint, included: bigint, unitPrice: string, per: bigint][] = [
      [100n, 0n, '1.005', 1n], // 100.5: floating point makes 1.005 × 100 = 100.49999999999999
      [1_000_000n, 0n, '0.1', 1n],
      [1_000_000n, 0n, '0.2', 1n],
      [100n, 0n, '0.07', 1n], // 0.07 × 100 = 7.000000000000001 in floating point
      [126n, 100n, '150', 1n],
      [99n, 100n, '150', 1n], // under the allowance: nothing
      [2_500_000n, 1_000_000n, '0.1', 1000n], // a price per thousand requests
      [9_007_199_254_740_993n, 0n, '2', 1_000_000_000n], // bytes past 2^53, a price per 10^9
      [3n, 0n, '0.000001', 1n],
      [1_500_000n, 0n, '0.000001', 3n], // a half minor unit rounds up
    ]
    for (const [quantity, included, unitPrice, per] of cases) {
      const billable = quantity > included ? quantity - included : 0n
      const expected = lineAmount(billable, parseUnitPrice(unitPrice), per)
      expect({ quantity, unitPrice, amount: meterCharge(quantity, { included: String(included), unitPrice, per: String(per) }) }).toEqual({
        quantity,
        unitPrice,
        amount: expected,
      })
    }
    expect(meterCharge(100n, { included: '0', unitPrice: '1.005', per: '1' })).toBe(101n)
    expect(unitPriceMicros('0.1')).toBe(100_000n)
    expect(() => unitPriceMicros('1e3')).toThrow()
  })

  test("amounts are formatted in the currency's own minor digits from an exact decimal, never a float", () => {
    // The console formats in the reader's locale; the test names one so the text is known.
    const en = (minor: bigint, currency: string, signed = false) => formatMoney(minor, currency, signed, 'en-US')
    expect(en(49_000n, 'EUR')).toBe('€490.00')
    expect(en(5n, 'EUR')).toBe('€0.05')
    expect(en(-3_900n, 'EUR', true)).toBe('-€39.00')
    expect(en(146_100n, 'EUR', true)).toBe('+€1,461.00')
    expect(en(0n, 'EUR', true)).toBe('€0.00')
    expect(en(1_500n, 'JPY')).toBe('¥1,500')
    expect(en(1_234n, 'KWD')).toBe('KWD\u00a01.234') // three minor digits; a no-break space
    // 2^53 + 1 cents: a float would print …992.00 (the nearest double), the exact decimal keeps the last cent.
    expect(en(9_007_199_254_740_993n, 'EUR')).toBe('€90,071,992,547,409.93')
    expect(formatQuantity('9007199254740993')).toBe(new Intl.NumberFormat().format(9_007_199_254_740_993n))
  })
})
