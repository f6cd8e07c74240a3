import { Elysia } from 'elysia'
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client'
import type { AppDeps } from '../compose'
import { IF_MATCH_REQUIRED, envelope, ifMatchVersion, listEnvelope, ok, okVersioned, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { logIds } from '../identity/context'
import { TENANT_ID, taskQueues } from '../../workflows/contract'
import { BillingWorkflowType, billingWorkflowIds, type PaymentGraceInput } from '../../workflows/contract-billing'
import { closePeriodNow, getInvoice, listTenantInvoices, renderInvoicePage } from './invoices'
import {
  CloseInvoiceBodyDto,
  InvoiceDto,
  InvoiceParams,
  ListInvoicesQuery,
  PaymentEventBodyDto,
  PriceBookDto,
  SubscriptionDto,
  UpdateSubscriptionBodyDto,
} from './model'
import { INVOICE_PAGE_CSP } from './render'
import { changeSubscription, getSubscription, priceBookView, recordPaymentEvent } from './service'

const HOUR = 3_600_000

/** Issue 38: the tenant's subscription, its payment events and its invoices; billing:read reads, billing:write changes. */
export const billingRoutes = (deps: AppDeps, http: HttpConventions) => {
  /** After the payment_failed commit: the debt's grace timer. A lost start is caught by the billing sweep. */
  const startGraceTimer = async (tenantId: string, since: Date, ids: Record<string, string>) => {
    const input: PaymentGraceInput = {
      tenantId,
      pastDueSince: since.toISOString(),
      graceEndsAt: new Date(since.getTime() + deps.config.BILLING_GRACE_HOURS * HOUR).toISOString(),
    }
    try {
      await (await deps.temporal.get()).workflow.start(BillingWorkflowType.grace, {
        workflowId: billingWorkflowIds.grace(tenantId, input.pastDueSince),
        taskQueue: taskQueues(deps.config).billing,
        args: [input],
        typedSearchAttributes: [{ key: TENANT_ID, value: tenantId }],
      })
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return
      deps.log.warn('payment grace timer not started; the billing sweep expires the debt instead', { ...ids, tenantId, error: String(err) })
    }
  }
  return new Elysia({ prefix: '/tenants/current', tags: ['Billing'] })
    .use(http)
    .get(
      '/subscription',
      async ({ request, ctx, set }) => {
        const { subscription, version } = await getSubscription(deps, ctx)
        return okVersioned(request, set, version, subscription)
      },
      {
        auth: 'billing:read',
        errors: ['T400', 'T404'],
        response: { 200: envelope(SubscriptionDto) },
        detail: { summary: "The tenant's subscription with its ETag (SUBSCRIPTION_NOT_FOUND: this deployment bills no one)" },
      },
    )
    .patch(
      '/subscription',
      async ({ request, ctx, body, set }) => {
        const { subscription, version } = await changeSubscription(deps, ctx, ifMatchVersion(request), body)
        await deps.pats.fence() // a block (or its lifting) holds on every replica before the answer says so
        return okVersioned(request, set, version, subscription)
      },
      {
        auth: 'billing:write',
        errors: ['T400', 'T404', 'T409', 'P412'],
        body: UpdateSubscriptionBodyDto,
        response: { 200: envelope(SubscriptionDto) },
        detail: {
          summary:
            'Change plan, cancel at period end (or undo), pause or resume; If-Match required. A move the state table does not allow is BILLING_STATE_TRANSITION_INVALID',
          parameters: [IF_MATCH_REQUIRED],
        },
      },
    )
    .get('/price-book', ({ request }) => ok(request, priceBookView(deps.config)), {
      auth: 'billing:read',
      errors: ['T400'],
      response: { 200: envelope(PriceBookDto) },
      detail: { summary: "This deployment's price book: its currency and every plan's fee, included quantities and unit prices (what a plan change costs)" },
    })
    .post(
      '/subscription/payment-events',
      async ({ request, ctx, body }) => {
        const { subscription, graceStart } = await recordPaymentEvent(deps, ctx, body, request.headers.get('x-billing-provider-key'))
        if (graceStart) await startGraceTimer(subscription.tenantId, graceStart, logIds(ctx))
        await deps.pats.fence()
        return ok(request, subscription)
      },
      {
        auth: 'billing:write',
        idempotent: true,
        errors: ['T400', 'T404', 'T409'],
        body: PaymentEventBodyDto,
        response: { 200: envelope(SubscriptionDto) },
        detail: {
          summary:
            'Record a payment outcome: paid settles past_due/unpaid and the open invoices; payment_failed makes an active subscription past_due and starts its grace period',
        },
      },
    )
    .get('/invoices', async ({ request, ctx, query }) => page(request, await listTenantInvoices(deps, ctx, query)), {
      auth: 'billing:read',
      errors: ['T400p'],
      query: ListInvoicesQuery,
      response: { 200: listEnvelope(InvoiceDto) },
      detail: { summary: 'Finalized invoices of this tenant, newest first' },
    })
    .post(
      '/invoices',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await closePeriodNow(deps, ctx, body.period))
      },
      {
        auth: 'billing:write',
        idempotent: true,
        errors: ['T400', 'T404', 'T409'],
        body: CloseInvoiceBodyDto,
        response: { 201: envelope(InvoiceDto) },
        detail: {
          ...links({ invoiceId: '$response.body#/data/id' }, [
            'GET /v1/tenants/current/invoices/{invoiceId}',
            'GET /v1/tenants/current/invoices/{invoiceId}/document',
          ]),
          summary: 'Close the current period now that it has ended, as the schedule would; INVOICE_SNAPSHOT_ALREADY_EXISTS when it is closed already',
        },
      },
    )
    .get('/invoices/:invoiceId', async ({ request, ctx, params }) => ok(request, await getInvoice(deps, ctx, params.invoiceId)), {
      auth: 'billing:read',
      errors: ['T400', 'T404'],
      params: InvoiceParams,
      response: { 200: envelope(InvoiceDto) },
      detail: { summary: 'One invoice with its lines and snapshot hash (NOT_FOUND outside this tenant)' },
    })
    .get(
      '/invoices/:invoiceId/document',
      async ({ ctx, params }) =>
        new Response(await renderInvoicePage(deps, ctx, params.invoiceId), {
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'content-security-policy': INVOICE_PAGE_CSP,
            'x-content-type-options': 'nosniff',
            'referrer-policy': 'no-referrer',
            'cache-control': 'private, no-store',
          },
        }),
      {
        auth: 'billing:read',
        errors: ['T400', 'T404'],
        params: InvoiceParams,
        detail: {
          summary: 'One invoice as a self-contained HTML page to send to accounts payable',
          responses: { 200: { description: 'The invoice page', content: { 'text/html': { schema: { type: 'string' } } } } },
        },
      },
    )
}
