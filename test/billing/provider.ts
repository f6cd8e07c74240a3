import type { Client } from '../support/client'

/** The deployment's payment-provider key in the billing tests' API (BILLING_PROVIDER_KEY). */
export const PROVIDER_KEY = 'test-billing-provider-key-0123456789abcdef'

/** A payment event as the provider adapter posts it: the tenant's billing credential and the deployment's key. */
export const paymentEvent = (
  client: Client,
  body: { type: 'paid' | 'payment_failed'; reference?: string },
  headers: Record<string, string> = {},
  key: string | null = PROVIDER_KEY,
) => client.post('/tenants/current/subscription/payment-events', body, { ...(key === null ? {} : { 'x-billing-provider-key': key }), ...headers })
