import { ApplicationFailure, Context } from '@temporalio/activity'
import { purgeAuditEntries } from '../api/audit/queries'
import { purgeExpiredRetired } from '../api/credentials/queries'
import { purgeExpiredAuthorizations } from '../api/device-authorizations/queries'
import { purgeDispatchedEvents } from '../api/events/queries'
import { deleteExpiredKeys } from '../api/idempotency/queries'
import { heldCoverage } from '../api/legal-holds/queries'
import { removeExpiredProjectMembers, warnExpiringProjectMembers } from './project-member-expiry'
import { purgeIdleBudgets } from '../api/rate-budgets/queries'
import { deleteDeadSessions } from '../api/sessions/queries'
import { purgeOldMessages } from '../api/webhook-deliveries/queries'
import type { ActivityDeps } from './deps'
import { ErrorType, HOUSEKEEPING_DEFAULT_BATCH_SIZE } from '../workflows/contract'

/** Revoked sessions stay a week so recent sign-outs remain visible to audit and support. */
const REVOKED_SESSION_RETENTION = '7 days'

/** An expired device authorization that was never answered (pending, or approved but not collected) stays a day. */
export const DEVICE_AUTHORIZATION_GRACE = '1 day'

function checkBatchSize(batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) {
    throw ApplicationFailure.create({ type: ErrorType.invalidArgument, message: `batchSize must be an integer in 1..100000, got ${batchSize}` })
  }
  return batchSize
}

/** Deletes in bounded batches until a batch comes back short. Each batch is its own statement (and
 *  transaction), so a backlog of millions never holds locks for long; heartbeats let Temporal notice a
 *  worker that died mid-purge, and deliver cancellation (worker shutdown) so it stops between batches.
 *  Stopping anywhere is harmless: deleting expired rows is idempotent and the next run resumes. */
async function purgeInBatches(deleteBatch: () => Promise<number>, batchSize: number): Promise<number> {
  const ctx = Context.current()
  let total = 0
  for (;;) {
    ctx.cancellationSignal.throwIfAborted()
    const n = await deleteBatch()
    total += n
    ctx.heartbeat({ purged: total })
    if (n < batchSize) return total
  }
}

const runOf = () => ({ workflowId: Context.current().info.workflowExecution?.workflowId })

const DAY_MS = 86_400_000
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS)

export function housekeepingActivities({ sql, config, log, keys, mail }: Pick<ActivityDeps, 'sql' | 'config' | 'log' | 'keys' | 'mail'>) {
  async function purge(what: string, batchSize: number, deleteBatch: (limit: number) => Promise<number>): Promise<number> {
    const limit = checkBatchSize(batchSize)
    const purged = await purgeInBatches(() => deleteBatch(limit), limit)
    log.info(`purged ${what}`, { purged, ...runOf() })
    return purged
  }

  return {
    purgeExpiredIdempotencyKeys: (batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE) =>
      purge('expired idempotency keys', batchSize, async (limit) => deleteExpiredKeys(sql, limit, await heldCoverage(sql))),

    /** Shared request buckets idle for a minute (full again, so deleting them changes nothing). */
    purgeIdleRateBudgets: (batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE) =>
      purge('idle rate budgets', batchSize, (limit) => purgeIdleBudgets(sql, limit)),

    /** Project memberships past their expiresAt (they stopped granting at that instant; this only removes them),
     *  each member told in the removal's transaction. */
    purgeExpiredProjectMembers: (batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE) =>
      purge('expired project memberships', batchSize, (limit) => removeExpiredProjectMembers({ sql, keys, mail }, limit)),

    /** The warning 7 days before a project membership expires, once for each expiry. Not a purge, but the same
     *  bounded batches until one comes back short. */
    warnExpiringProjectMembers: (batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE) =>
      purge('expiry warnings of project memberships', batchSize, (limit) => warnExpiringProjectMembers({ sql, keys, mail }, limit)),

    /** Digests of destroyed credentials (migrations/0090) past the time the credential would have expired by itself. */
    purgeRetiredCredentials: (batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE) =>
      purge('retired credentials', batchSize, (limit) => purgeExpiredRetired(sql, limit)),

    /** Device authorizations past their expiry (docs/api.md "Device authorization"). */
    purgeExpiredDeviceGrants: (batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE) =>
      purge('expired device authorizations', batchSize, (limit) => purgeExpiredAuthorizations(sql, DEVICE_AUTHORIZATION_GRACE, limit)),

    purgeExpiredSessions: (batchSize: number = HOUSEKEEPING_DEFAULT_BATCH_SIZE) =>
      purge('expired sessions', batchSize, (limit) => deleteDeadSessions(sql, limit, REVOKED_SESSION_RETENTION)),

    // The retention periods (api/platform/config.ts). Each cut-off is fixed once per run, so a purge that takes long
    // does not chase rows that age while it runs. What active legal holds cover is read again for every batch, so a
    // hold placed while a purge runs protects from the next batch on.

    /** Audit entries past AUDIT_RETENTION_DAYS, whatever their tenant (entries outlive a deleted tenant until then). */
    purgeExpiredAuditEntries(batchSize: number = config.RETENTION_PURGE_BATCH) {
      const before = daysAgo(config.AUDIT_RETENTION_DAYS)
      return purge('expired audit entries', batchSize, async (limit) => purgeAuditEntries(sql, before, limit, await heldCoverage(sql)))
    },

    /** Webhook messages (and their attempts) past WEBHOOK_MESSAGES_RETENTION_DAYS. */
    purgeExpiredWebhookMessages(batchSize: number = config.RETENTION_PURGE_BATCH) {
      const before = daysAgo(config.WEBHOOK_MESSAGES_RETENTION_DAYS)
      return purge('expired webhook messages', batchSize, async (limit) => purgeOldMessages(sql, before, limit, await heldCoverage(sql)))
    },

    /** Dispatched events past EVENTS_RETENTION_DAYS that no kept webhook message needs. */
    purgeExpiredEvents(batchSize: number = config.RETENTION_PURGE_BATCH) {
      const before = daysAgo(config.EVENTS_RETENTION_DAYS)
      return purge('expired events', batchSize, async (limit) => purgeDispatchedEvents(sql, before, limit, await heldCoverage(sql)))
    },
  }
}
