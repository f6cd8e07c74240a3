import { ApiError } from '../platform/errors'

/** Where a tenant is in its life (migrations/0045): `offboarding` while an offboarding request is open, `deleting`
 *  while its deletion job runs, `deleted` after. */
export type TenantLifecycle = 'active' | 'offboarding' | 'deleting' | 'deleted'
export const TENANT_LIFECYCLES: readonly TenantLifecycle[] = ['active', 'offboarding', 'deleting', 'deleted']

/** What the new-work gate knows of the caller's tenant, read with the credential (api/credentials/service.ts) so the
 *  gate costs no round trip. Another reason to refuse new work is a field here and a line in REFUSALS below. */
export interface TenantStanding {
  lifecycle: TenantLifecycle
  /** Why the tenant is billing-blocked (api/billing/block.ts: unpaid, canceled, paused, operator); empty when it is not. */
  billingBlock: readonly string[]
}

export const ACTIVE_STANDING: TenantStanding = Object.freeze({ lifecycle: 'active', billingBlock: Object.freeze([]) })

type Refusal = (s: TenantStanding) => ApiError | undefined

/** Every reason a tenant may not start new work, in the order they are reported: the first that applies answers. */
const REFUSALS: readonly Refusal[] = [
  (s) =>
    s.lifecycle === 'active'
      ? undefined
      : new ApiError(
          'TENANT_OFFBOARDING',
          s.lifecycle === 'offboarding'
            ? 'This tenant is offboarding: it starts no new work (reads, exports and cancelling the offboarding still work: DELETE /v1/tenants/current/offboarding)'
            : `This tenant is ${s.lifecycle}: it starts no new work`,
        ),
  (s) =>
    s.billingBlock.length === 0
      ? undefined
      : new ApiError(
          'BILLING_BLOCKED',
          `This tenant is billing-blocked (${s.billingBlock.join(', ')}): it starts no new work until the block is lifted; reads, exports and billing still work. ` +
            (s.billingBlock.includes('operator')
              ? 'The platform operator lifts an operator block.'
              : 'A recorded payment lifts it, or a billing admin or owner resuming the subscription (GET /v1/tenants/current/subscription).'),
        ),
]

/** The error codes REFUSALS can raise, as the error sets a gated operation declares in addition to its own. */
export const NEW_WORK_GATE_SETS = ['G409', 'G400'] as const

/** Throws the first refusal that applies; the gate (api/http/new-work.ts) and services that admit work into a tenant
 *  other than the caller's (accepting an invitation) call it. */
export function requireGoodStanding(s: TenantStanding): void {
  for (const refuse of REFUSALS) {
    const err = refuse(s)
    if (err) throw err
  }
}
