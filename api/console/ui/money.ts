// Money in the console as the API sends it: integer minor units in decimal strings, and unit prices in minor units
// with up to six fraction digits. Arithmetic is bigint (a unit price in millionths of a minor unit), so a price shown
// before a plan change is the integer the invoice will hold; only the last step, Intl.NumberFormat, makes it text.

const MICROS = 1_000_000n

/** The currency's minor-unit digits as ISO 4217 gives them (2 for EUR, 0 for JPY). */
export const minorDigits = (currency: string) => new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2

/** 123456n EUR → "€1,234.56" in the reader's locale (or `locale`). The integer becomes an exact decimal string first, which
 *  Intl.NumberFormat formats without passing through a float. */
export function formatMoney(minor: bigint, currency: string, signed = false, locale?: string): string {
  const digits = minorDigits(currency)
  const negative = minor < 0n
  const s = (negative ? -minor : minor).toString().padStart(digits + 1, '0')
  const decimal = `${negative ? '-' : ''}${digits === 0 ? s : `${s.slice(0, -digits)}.${s.slice(-digits)}`}` as `${number}`
  return new Intl.NumberFormat(locale, { style: 'currency', currency, signDisplay: signed ? 'exceptZero' : 'auto' }).format(decimal)
}

/** "0.1" (minor units) → 100000n millionths of a minor unit; the API's format, so anything else is a broken answer. */
export function unitPriceMicros(text: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text)
  if (!m) throw new Error(`unexpected unit price "${text}"`)
  return BigInt(m[1]!) * MICROS + BigInt((m[2] ?? '').padEnd(6, '0'))
}

/** What a meter's line comes to at its period's close: the quantity beyond what the plan includes, times the unit
 *  price per `per` units, rounded half up to a whole minor unit (api/billing/money.ts's lineAmount, the invoice's rule). */
export function meterCharge(quantity: bigint, m: { included: string; unitPrice: string; per: string }): bigint {
  const billable = quantity > BigInt(m.included) ? quantity - BigInt(m.included) : 0n
  const divisor = MICROS * BigInt(m.per)
  return (billable * unitPriceMicros(m.unitPrice) + divisor / 2n) / divisor
}

/** A whole quantity (a decimal string, exact beyond 2^53) with the reader's grouping. */
export const formatQuantity = (q: string) => new Intl.NumberFormat().format(BigInt(q))
