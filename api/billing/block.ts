// The billing block: whether a tenant may start new work, read from its subscription alone. Blocked while the
// subscription is unpaid, canceled (which it becomes only when its last period has ended) or paused, or while an
// operator has blocked it. Nothing is deleted and running work is not stopped; only new work is refused.
import { recordAudit } from '../audit/service'
import { publishEvent } from '../events/service'
import type { ActingContext } from '../identity/context'
import type { Db } from '../platform/db'
import { findBlockFields, type SubscriptionRow } from './queries'
import { BLOCKING_STATUSES, type SubscriptionStatus } from './states'

export type BlockReason = 'unpaid' | 'canceled' | 'paused' | 'operator'

type BlockFields = Pick<SubscriptionRow, 'status' | 'operator_blocked_at'>

export const blockReasons = (s: BlockFields | undefined): BlockReason[] => (s ? blockReasonsOf(s.status, !!s.operator_blocked_at) : [])

/** The same rule from the two columns the credential queries read with a token (a tenant with no subscription: null). */
export function blockReasonsOf(status: string | null, operatorBlocked: boolean | null): BlockReason[] {
  const reasons: BlockReason[] = status !== null && BLOCKING_STATUSES.includes(status as SubscriptionStatus) ? [status as BlockReason] : []
  if (operatorBlocked) reasons.push('operator')
  return reasons
}

/** The tenant's reasons now; empty when it may start new work (a tenant without a subscription is not billed, so
 *  not blocked). One primary-key read. */
export async function billingBlockReasons(db: Db, tenantId: string): Promise<BlockReason[]> {
  return blockReasons(await findBlockFields(db, tenantId))
}

/** In the change's transaction: when a change moved the tenant into or out of the block, the event and the audit
 *  entry say so (and only then: a change within the block, say paused → canceled, announces nothing new). */
export async function announceBlockChange(tx: Db, ctx: ActingContext, before: BlockFields, after: SubscriptionRow): Promise<void> {
  const was = blockReasons(before)
  const now = blockReasons(after)
  const target = { type: 'subscription', id: after.id }
  if (was.length === 0 && now.length > 0) {
    await publishEvent(tx, after.tenant_id, 'billing.blocked', { reasons: now })
    await recordAudit(tx, ctx, { action: 'billing.blocked', tenantId: after.tenant_id, target, details: { reasons: now } })
  } else if (was.length > 0 && now.length === 0) {
    await publishEvent(tx, after.tenant_id, 'billing.unblocked', { subscriptionId: after.id })
    await recordAudit(tx, ctx, { action: 'billing.unblocked', tenantId: after.tenant_id, target, details: { was } })
  }
}
