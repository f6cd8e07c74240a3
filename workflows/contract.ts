// The Temporal contract shared by the API (which starts and inspects workflows), the worker and the
// workflows themselves. It holds names and types only: no workflow, activity or client code, so the
// API can import it and the workflow bundle can include it. For the latter, import nothing here but
// @temporalio/common and types. Renaming anything changes what is persisted in Temporal histories and
// schedules, so treat it like a database schema.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common'
import type { Config } from '../api/platform/config'

type PrefixConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE_PREFIX'>

/** One task queue per concern, so a backlog of builds can never starve housekeeping or mail. */
export function taskQueues(config: PrefixConfig) {
  const prefix = config.TEMPORAL_TASK_QUEUE_PREFIX
  return {
    platform: `${prefix}-platform`,
    // Provisioning and reconciliation wait on S3; a slow endpoint must not hold up platform work.
    storage: `${prefix}-storage`,
    // Outgoing mail (workflows/mail.ts): an SMTP outage must not hold up anything else.
    mail: `${prefix}-mail`,
    // Model version validation reads whole objects from S3: a large checkpoint must not hold up provisioning.
    models: `${prefix}-models`,
    // Edge package builds stream gigabytes for minutes: a backlog of them must not hold up anything else.
    packages: `${prefix}-packages`,
    // Webhook deliveries (workflows/webhooks.ts): thousands of slow receivers must not hold up anything else.
    webhooks: `${prefix}-webhooks`,
    // Audit log exports stream millions of rows into S3 for minutes: a backlog of them must not hold up anything else.
    audit: `${prefix}-audit`,
    // The re-seal after a key rotation (workflows/reseal.ts): rare, and never behind a backlog of anything else.
    keys: `${prefix}-keys`,
    // Tenant deletion (workflows/tenant-deletion.ts): hours of batched deletes must not hold up anything else.
    deletion: `${prefix}-deletion`,
    // Period closes and grace timers: money must not wait behind a backlog of builds or deliveries.
    billing: `${prefix}-billing`,
    // Tenant offboarding (workflows/offboarding.ts): a whole tenant's export, then a timer of weeks.
    offboarding: `${prefix}-offboarding`,
  } as const
}

/** Workflow type names are the exported function names in workflows/index.ts; the API starts by name so
 *  it never has to import workflow code. */
export const WorkflowType = {
  housekeeping: 'housekeepingWorkflow',
} as const

/** Keyword search attribute carried by every workflow, so operators and the API can filter by tenant.
 *  Registered on the server (`--search-attribute TenantId=Keyword` on the dev server). */
export const TENANT_ID = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD)
/** TenantId of platform-wide workflows. An explicit marker rather than an absent attribute keeps
 *  "every workflow has a TenantId" true, and `TenantId = "-"` lists system work. Tenant ids are UUIDs,
 *  so it cannot collide with one. */
export const SYSTEM_TENANT = '-'

/** Error types activities throw when a retry cannot help; workflows list them as non-retryable. */
export const ErrorType = {
  invalidArgument: 'InvalidArgument',
} as const

export interface HousekeepingInput {
  /** Rows deleted per statement; bounded so a huge backlog never holds a long lock. Unset, the retention purges use
   *  the worker's RETENTION_PURGE_BATCH and the others HOUSEKEEPING_DEFAULT_BATCH_SIZE. */
  batchSize?: number
}

export interface HousekeepingResult {
  idempotencyKeysPurged: number
  sessionsPurged: number
  auditEntriesPurged: number
  webhookMessagesPurged: number
  eventsPurged: number
  /** Absent from runs that started before the purge existed. */
  rateBudgetsPurged?: number
  /** Absent from runs that started before the purge existed. */
  projectMembersPurged?: number
  /** Project memberships warned of their expiry; absent from runs that started before the warning existed. */
  projectMembersWarned?: number
  /** Absent from runs that started before the purge existed. */
  retiredDigestsPurged?: number
  /** Expired device authorizations; absent from runs that started before the purge existed. */
  deviceGrantsPurged?: number
}

export const HOUSEKEEPING_DEFAULT_BATCH_SIZE = 5000

// Housekeeping is a singleton per deployment. The prefix is in its ids because two deployments sharing a
// namespace (say a test run next to development) must not overwrite each other's schedule.
export const housekeepingScheduleId = (config: PrefixConfig) => `${config.TEMPORAL_TASK_QUEUE_PREFIX}-housekeeping`

/** Ids are meaningful so operators can find a run by what it is. The schedule appends the scheduled
 *  time to its workflow id; ad-hoc runs (operators, tests) add their own suffix. */
export const workflowIds = {
  housekeeping: (config: PrefixConfig, suffix?: string) => (suffix ? `${housekeepingScheduleId(config)}/${suffix}` : housekeepingScheduleId(config)),
} as const
