// The schedules the worker owns, as definitions for ensureSchedule (worker/ensure-schedule.ts). Each task queue
// in worker/queues.ts lists the ones that start its workflows.
import { ScheduleOverlapPolicy } from '@temporalio/client'
import type { Config } from '../api/platform/config'
import { housekeepingScheduleId, SYSTEM_TENANT, taskQueues, TENANT_ID, workflowIds, WorkflowType, type HousekeepingInput } from '../workflows/contract'
import { BillingWorkflowType, billingSweepScheduleId } from '../workflows/contract-billing'
import { MAIL_SWEEP_EVERY_MS, mailSweepScheduleId, MailWorkflowType } from '../workflows/contract-mail'
import { STORAGE_SAMPLE_EVERY_MS, storageSampleScheduleId, UsageWorkflowType } from '../workflows/contract-usage'
import type { ScheduleDefinition } from './ensure-schedule'

const system = [{ key: TENANT_ID, value: SYSTEM_TENANT }]

/** Purges expired idempotency keys and dead sessions every HOUSEKEEPING_INTERVAL_MINUTES (0: no schedule). */
export function housekeepingSchedule(config: Config): ScheduleDefinition {
  const everyMs = config.HOUSEKEEPING_INTERVAL_MINUTES * 60_000
  return {
    scheduleId: housekeepingScheduleId(config),
    name: 'housekeeping',
    enabled: everyMs > 0,
    everyMs,
    action: {
      type: 'startWorkflow',
      workflowType: WorkflowType.housekeeping,
      taskQueue: taskQueues(config).platform,
      workflowId: workflowIds.housekeeping(config),
      args: [{} satisfies HousekeepingInput],
      typedSearchAttributes: system,
      // Bounds a wedged run: with overlap SKIP, a run that never ends would silently stop all later ones.
      workflowExecutionTimeout: '2 hours',
    },
    // SKIP: a slow purge never piles up concurrent purges. A catch-up window of one interval means an
    // outage is followed by a single run, not a burst of missed ones.
    overlap: ScheduleOverlapPolicy.SKIP,
    catchupWindowMs: everyMs,
    note: 'Managed by the worker (worker/schedules.ts) from HOUSEKEEPING_INTERVAL_MINUTES: a pause is kept, other edits may be reverted at worker start.',
    memo: { description: 'Purges expired idempotency keys and expired or long-revoked sessions.', managedBy: 'worker/schedules.ts' },
  }
}

/** Every minute: restarts the send of outbox rows whose start after commit was lost. */
export function mailSweepSchedule(config: Config): ScheduleDefinition {
  const scheduleId = mailSweepScheduleId(config)
  return {
    scheduleId,
    name: 'mail sweep',
    enabled: true,
    everyMs: MAIL_SWEEP_EVERY_MS,
    action: {
      type: 'startWorkflow',
      workflowType: MailWorkflowType.sweep,
      taskQueue: taskQueues(config).mail,
      workflowId: scheduleId,
      args: [],
      typedSearchAttributes: system,
      workflowExecutionTimeout: '10 minutes',
    },
    overlap: ScheduleOverlapPolicy.SKIP,
    catchupWindowMs: MAIL_SWEEP_EVERY_MS,
    note: 'Managed by the worker (worker/schedules.ts): a pause is kept, other edits may be reverted at worker start.',
  }
}

/** Every BILLING_SWEEP_INTERVAL_MINUTES (0: no schedule): closes the periods that have ended (so a period is closed at
 *  most one interval after its end) and expires the grace of debts whose timer was lost. */
export function billingSweepSchedule(config: Config): ScheduleDefinition {
  const scheduleId = billingSweepScheduleId(config)
  const everyMs = config.BILLING_SWEEP_INTERVAL_MINUTES * 60_000
  return {
    scheduleId,
    name: 'billing sweep',
    enabled: everyMs > 0,
    everyMs,
    action: {
      type: 'startWorkflow',
      workflowType: BillingWorkflowType.sweep,
      taskQueue: taskQueues(config).billing,
      workflowId: scheduleId,
      args: [],
      typedSearchAttributes: system,
      workflowExecutionTimeout: '30 minutes',
    },
    overlap: ScheduleOverlapPolicy.SKIP,
    catchupWindowMs: everyMs,
    note: 'Managed by the worker (worker/schedules.ts) from BILLING_SWEEP_INTERVAL_MINUTES: a pause is kept, other edits may be reverted at worker start.',
    memo: { description: 'Closes ended billing periods into invoices and expires lost payment grace timers.', managedBy: 'worker/schedules.ts' },
  }
}

/** Every hour: the storage meter's sample (byte-hours from each tenant's stored summary). */
export function storageUsageSampleSchedule(config: Config): ScheduleDefinition {
  const scheduleId = storageSampleScheduleId(config)
  return {
    scheduleId,
    name: 'storage usage sample',
    enabled: true,
    everyMs: STORAGE_SAMPLE_EVERY_MS,
    action: {
      type: 'startWorkflow',
      workflowType: UsageWorkflowType.storageSample,
      taskQueue: taskQueues(config).platform,
      workflowId: scheduleId,
      args: [],
      typedSearchAttributes: system,
      workflowExecutionTimeout: '30 minutes',
    },
    // SKIP and a catch-up window of one interval: after an outage one sample runs, for the hour it runs in; the hours
    // missed are not metered rather than guessed.
    overlap: ScheduleOverlapPolicy.SKIP,
    catchupWindowMs: STORAGE_SAMPLE_EVERY_MS,
    note: 'Managed by the worker (worker/schedules.ts): a pause is kept (and stops storage metering), other edits may be reverted at worker start.',
  }
}
