import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { PERIOD_LABEL } from './periods'
import { SUBSCRIPTION_STATUSES } from './states'

const integer = z.string().regex(/^-?\d+$/)
const time = z.iso.datetime()

export const SubscriptionDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    planId: z.string(),
    planName: z.string().nullable().describe("The plan's name in this deployment's price book; null if the book no longer lists it"),
    status: z.enum(SUBSCRIPTION_STATUSES),
    currency: z.string().describe('ISO 4217'),
    monthlyFee: integer.nullable().describe('Minor units of currency, a decimal string; null if the plan is not in the price book'),
    currentPeriod: z.object({ period: z.string(), start: time, end: time }),
    cancelAtPeriodEnd: z.boolean(),
    pastDueSince: time.nullable(),
    graceEndsAt: time.nullable().describe('When a past_due subscription becomes unpaid unless paid'),
    canceledAt: time.nullable(),
    billingBlock: z.object({
      blocked: z.boolean(),
      reasons: z.array(z.enum(['unpaid', 'canceled', 'paused', 'operator'])),
    }),
    provider: z
      .object({ name: z.string().nullable(), customerRef: z.string().nullable(), subscriptionRef: z.string().nullable() })
      .describe('A payment provider’s references; empty until one is attached'),
    version: z.number().int(),
    createdAt: time,
    updatedAt: time,
  })
  .meta({ id: 'SubscriptionDto' })

export const UpdateSubscriptionBodyDto = z
  .strictObject({
    planId: z.string().min(1).max(63).optional().describe("A plan of the deployment's price book"),
    cancelAtPeriodEnd: z.boolean().optional(),
    status: z.enum(['active', 'paused']).optional().describe('paused pauses an active subscription; active resumes a paused one'),
  })
  .refine((b) => Object.keys(b).length > 0, 'name at least one of planId, cancelAtPeriodEnd, status')
  .meta({ id: 'UpdateSubscriptionBodyDto', minProperties: 1 })

export const PaymentEventBodyDto = z
  .strictObject({
    type: z.enum(['paid', 'payment_failed']),
    reference: z.string().min(1).max(200).optional().describe("The provider's or operator's reference of the payment"),
  })
  .meta({ id: 'PaymentEventBodyDto' })

export const InvoiceLineDto = z
  .object({
    kind: z.enum(['fee', 'usage', 'adjustment']),
    meter: z.string().nullable(),
    description: z.string(),
    quantity: integer,
    included: integer,
    billable: integer,
    unitPrice: z.string().describe('Minor units per `per` units, a decimal with up to 6 fraction digits'),
    per: integer.describe('How many units the unit price is for (1, or 1000 for a price per thousand requests)'),
    amount: integer.describe('Minor units'),
  })
  .meta({ id: 'InvoiceLineDto' })

export const InvoiceDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    subscriptionId: z.uuid(),
    period: z.string(),
    periodStart: time,
    periodEnd: time,
    usageCutoff: time.describe('Usage recorded from this instant on is billed on the next invoice'),
    planId: z.string(),
    currency: z.string(),
    lines: z.array(InvoiceLineDto),
    subtotal: integer,
    total: integer,
    hash: z.string().describe('sha256 of the canonical snapshot (docs/api.md "Billing")'),
    status: z.enum(['open', 'paid', 'void']),
    finalizedAt: time,
    paidAt: time.nullable(),
    provider: z.object({ invoiceRef: z.string().nullable() }),
  })
  .meta({ id: 'InvoiceDto' })

export const CloseInvoiceBodyDto = z
  .strictObject({ period: z.string().regex(PERIOD_LABEL).describe('YYYY-MM (UTC): the subscription’s current period, once it has ended') })
  .meta({ id: 'CloseInvoiceBodyDto' })

export const PriceBookDto = z
  .object({
    currency: z.string().describe('ISO 4217: every fee and price of the book is in it'),
    defaultPlan: z.string().nullable().describe('The plan new tenants start on; null: this deployment bills no one'),
    plans: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        monthlyFee: integer.describe('Minor units of currency, a decimal string'),
        meters: z.array(
          z.object({
            meter: z.string(),
            included: integer.describe('Quantity included in the fee each period'),
            unitPrice: z.string().describe('Minor units per `per` units, a decimal with up to 6 fraction digits'),
            per: integer,
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'PriceBookDto' })

export const InvoiceParams = z.object({ invoiceId: z.string() })
export const ListInvoicesQuery = PageQuery
