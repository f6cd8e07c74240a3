// The price book: one JSON file per deployment (BILLING_PRICE_BOOK_FILE; api/billing/price-book.json ships as the
// default), read and checked once when a process starts. A file rather than a table because prices are a
// deployment's decision reviewed like its configuration, and an invoice copies the prices it used into its
// snapshot, so editing the file never changes an invoice already finalized.
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import type { Config } from '../platform/config'
import { isMeter } from '../usage/meters'
import { CurrencyCode, parseUnitPrice } from './money'

const minorUnits = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)
const unitPrice = z.string().refine((s) => {
  try {
    parseUnitPrice(s)
    return true
  } catch {
    return false
  }
}, 'a decimal string of minor units with at most 6 fraction digits ("0.1" is a tenth of a cent)')

const PlanSchema = z.strictObject({
  name: z.string().min(1).max(100),
  monthlyFee: minorUnits.describe('minor units of the currency, charged whole for every period closed on the plan'),
  // Keys are meters of api/usage/meters.ts. `per`: the unit price is for this many units (default 1).
  meters: z.record(
    z.string().refine((name): boolean => isMeter(name), 'not a meter of api/usage/meters.ts'),
    z.strictObject({ included: minorUnits, unitPrice, per: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(1) }),
  ),
})

export const PriceBookSchema = z
  .strictObject({
    currency: CurrencyCode,
    // Absent or null: new tenants get no subscription (a deployment without billing); GET answers 404.
    defaultPlan: z.string().nullable().default(null),
    plans: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/), PlanSchema),
  })
  .refine((b) => b.defaultPlan === null || b.defaultPlan in b.plans, 'defaultPlan must name one of plans')

export type PriceBook = z.infer<typeof PriceBookSchema>
export type Plan = PriceBook['plans'][string]

const loaded = new Map<string, PriceBook>()

/** The deployment's price book, read once per file; a malformed file fails the process start with zod's message. */
export function priceBookOf(config: Pick<Config, 'BILLING_PRICE_BOOK_FILE'>): PriceBook {
  const path = config.BILLING_PRICE_BOOK_FILE
  let book = loaded.get(path)
  if (!book) {
    const parsed = PriceBookSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')))
    if (!parsed.success) throw new Error(`BILLING_PRICE_BOOK_FILE ${path}: ${z.prettifyError(parsed.error)}`)
    book = parsed.data
    loaded.set(path, book)
  }
  return book
}
