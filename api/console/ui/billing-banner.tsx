// The banner a billing-blocked tenant's members see on every page: what the platform refuses, what still works and who
// can lift it. Driven by GET /v1/users/me's billingBlock, the standing the server's new-work gate reads with the same
// credential, so the banner and the refusals (400 BILLING_BLOCKED) agree.
import type { Me } from './page'

const WHY: Record<string, string> = {
  paused: 'the subscription is paused',
  unpaid: 'the subscription is unpaid: its grace period ended without a payment',
  canceled: 'the subscription is canceled',
  operator: 'the platform operator blocked it',
}

/** Who lifts each reason (docs/api.md "Billing"): a paused subscription its billing admins or owners, by resuming; a
 *  debt a recorded payment; a canceled subscription nobody (final); an operator's block the operator alone. */
const LIFT: Record<string, string> = {
  paused: 'A billing admin or an owner lifts it by resuming the subscription.',
  unpaid: 'A recorded payment lifts it: billing admins and owners arrange the payment.',
  canceled: 'A canceled subscription is final: contact the platform operator.',
  operator: 'Only the platform operator lifts an operator’s block.',
}

export function BillingBanner({ me }: { me: Me }) {
  const reasons = me.billingBlock ?? []
  if (!me.currentMembership || reasons.length === 0) return null
  return (
    <div class="billing-banner" role="region" aria-label="Billing block">
      <p>
        <strong>{me.currentMembership.tenantName} is billing-blocked</strong> ({reasons.map((r) => WHY[r] ?? r).join('; ')}).
      </p>
      <p>
        New work is refused: edge package builds, model registrations, uploads and validations, training jobs, storage provisioning and reconciliation, new
        projects and embodiment profiles, webhook endpoints and deliveries, new members, invitations and API keys, new domains and sign-in connections. Running
        work finishes, nothing is deleted, and reading, exports, sign-in and billing keep working.
      </p>
      <p>{reasons.map((r) => LIFT[r] ?? `Reason “${r}”: ask the platform operator.`).join(' ')}</p>
    </div>
  )
}
