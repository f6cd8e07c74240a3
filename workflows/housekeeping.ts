import { log, patched, proxyActivities } from '@temporalio/workflow'
// Type-only: activity code (Postgres, Node APIs) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { ErrorType, HOUSEKEEPING_DEFAULT_BATCH_SIZE, type HousekeepingInput, type HousekeepingResult } from './contract'
import type { StorageSampleResult } from './contract-usage'

const {
  purgeExpiredIdempotencyKeys,
  purgeExpiredSessions,
  purgeExpiredAuditEntries,
  purgeExpiredWebhookMessages,
  purgeExpiredEvents,
  purgeIdleRateBudgets,
  purgeExpiredProjectMembers,
  warnExpiringProjectMembers,
  purgeRetiredCredentials,
  purgeExpiredDeviceGrants,
} = proxyActivities<Activities>({
  // A purge of a large backlog is many short batches; heartbeats, not the overall timeout, detect a dead worker.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '1 minute',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    // The next scheduled run picks up whatever this one could not finish, so there is no point retrying forever.
    maximumAttempts: 5,
    nonRetryableErrorTypes: [ErrorType.invalidArgument],
  },
})

/** Purges expired idempotency keys, dead sessions, expired project memberships (warning members 7 days ahead), retired
 *  credential digests and expired device authorizations, and what has outlived its retention period: audit entries,
 *  webhook messages with their attempts, dispatched events. Scheduled by the worker (worker/schedules.ts). The
 *  retention purges take their batch size from the worker's configuration unless the input names one. */
export async function housekeepingWorkflow(input: HousekeepingInput = {}): Promise<HousekeepingResult> {
  const batchSize = input.batchSize ?? HOUSEKEEPING_DEFAULT_BATCH_SIZE
  // Independent tables: purge them concurrently. Messages before events: an event stays while a message needs it.
  const [idempotencyKeysPurged, sessionsPurged, auditEntriesPurged, [webhookMessagesPurged, eventsPurged]] = await Promise.all([
    purgeExpiredIdempotencyKeys(batchSize),
    purgeExpiredSessions(batchSize),
    purgeExpiredAuditEntries(input.batchSize),
    purgeExpiredWebhookMessages(input.batchSize).then(async (messages) => [messages, await purgeExpiredEvents(input.batchSize)] as const),
  ])
  // Patched: a run that started before this purge existed replays without it.
  const rateBudgetsPurged = patched('purge-idle-rate-budgets') ? await purgeIdleRateBudgets(batchSize) : undefined
  // Expired project memberships already grant nothing (every request compares expiresAt); this only tidies them.
  const projectMembersPurged = patched('purge-expired-project-members') ? await purgeExpiredProjectMembers(batchSize) : undefined
  // After the purge, so a membership that expired while the schedule was down is told it expired, not warned of it.
  const projectMembersWarned = patched('warn-expiring-project-members') ? await warnExpiringProjectMembers(batchSize) : undefined
  // A retired credential's digest is kept only until the credential would have expired by itself. (Not named
  // …Credentials…: the log redacts such keys, and this is a count.)
  const retiredDigestsPurged = patched('purge-retired-credentials') ? await purgeRetiredCredentials(batchSize) : undefined
  // Expired device authorizations answer nothing but expired_token. (Not named …Authorizations…: the log redacts such
  // keys, and this is a count.)
  const deviceGrantsPurged = patched('purge-expired-device-authorizations') ? await purgeExpiredDeviceGrants(batchSize) : undefined
  const result = {
    idempotencyKeysPurged,
    sessionsPurged,
    auditEntriesPurged,
    webhookMessagesPurged,
    eventsPurged,
    rateBudgetsPurged,
    projectMembersPurged,
    projectMembersWarned,
    retiredDigestsPurged,
    deviceGrantsPurged,
  }
  log.info('housekeeping done', result)
  return result
}

// One statement over the stored summaries: short. A sample that keeps failing is left to the next hour's run, whose
// keys differ, so retrying past the hour would only record a late copy of this one.
const { sampleStorageUsage } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
    nonRetryableErrorTypes: [ErrorType.invalidArgument],
  },
})

/** The storage meter's hourly sample (usage: storage byte-hours), scheduled by the worker (worker/schedules.ts). */
export async function sampleStorageUsageWorkflow(): Promise<StorageSampleResult> {
  return sampleStorageUsage()
}
