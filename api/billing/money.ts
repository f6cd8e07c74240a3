// Money as integers only. Amounts are bigint minor units of an ISO 4217 currency (cents for EUR, yen for JPY); a unit
// price may be a fraction of a minor unit (a tenth of a cent per API request), so it is held in millionths of a minor
// unit. Nothing here ever touches a JavaScript number's fraction: 0.1 + 0.2 is exactly 0.3 in this arithmetic.
import { z } from 'zod'

export const MICROS = 1_000_000n

/** The currency's minor-unit digits as ISO 4217 gives them (2 for EUR, 0 for JPY, 3 for KWD). */
export function minorDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
}

export const CurrencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .refine((c) => Intl.supportedValuesOf('currency').includes(c), 'not an ISO 4217 currency code')

/** "0.1" (a tenth of a minor unit) → 100000n millionths. At most 6 fraction digits; anything else is refused, never
 *  rounded. */
export function parseUnitPrice(text: string): bigint {
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(text)
  if (!m) throw new Error(`unit price "${text}" is not a decimal of minor units with at most 6 fraction digits`)
  return BigInt(m[1]!) * MICROS + BigInt((m[2] ?? '').padEnd(6, '0'))
}

/** quantity × unit price ÷ per (a price per 1,000 requests, per 10^12 byte-hours), rounded half up to a whole minor
 *  unit, per line (the way the invoice shows it). */
export const lineAmount = (quantity: bigint, unitPriceMicros: bigint, per = 1n): bigint => {
  const divisor = MICROS * per
  return (quantity * unitPriceMicros + divisor / 2n) / divisor
}

/** 123456n EUR → "1234.56"; 5n JPY → "5". String work on the integer, so no rounding can creep in. */
export function formatMinor(amount: bigint, currency: string): string {
  const digits = minorDigits(currency)
  const negative = amount < 0n
  const s = (negative ? -amount : amount).toString().padStart(digits + 1, '0')
  const whole = digits === 0 ? s : `${s.slice(0, -digits)}.${s.slice(-digits)}`
  return negative ? `-${whole}` : whole
}

/** A unit price in millionths of a minor unit, shown in major units with what precision it has ("0.001" EUR). */
export function formatUnitPrice(micros: bigint, currency: string): string {
  const digits = minorDigits(currency) + 6
  const s = micros.toString().padStart(digits + 1, '0')
  const whole = s.slice(0, -digits)
  const fraction = s.slice(-digits).replace(/0+$/, '')
  const shown = fraction.length < minorDigits(currency) ? fraction.padEnd(minorDigits(currency), '0') : fraction
  return shown ? `${whole}.${shown}` : whole
}
