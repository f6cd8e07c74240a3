// The worker's task queues, one row each: the workflows a queue runs, the activities they call and the schedules
// that start them. worker/run.ts starts one Temporal Worker per row, on one connection, with that row's workflows
// and activities only, so a workflow started on the wrong queue fails instead of running there. A new queue is its
// name in workflows/contract.ts (taskQueues), its payload types in a workflows/contract-<concern>.ts, and a row here.
import { fileURLToPath } from 'node:url'
import { activitySets, type ActivityDeps } from '../activities'
import type { Config } from '../api/platform/config'
import type { taskQueues } from '../workflows/contract'
import type { ScheduleDefinition } from './ensure-schedule'
import { billingSweepSchedule, housekeepingSchedule, mailSweepSchedule, storageUsageSampleSchedule } from './schedules'

export interface TaskQueue {
  /** Its key in taskQueues(config); the name is `<prefix>-<queue>`. */
  queue: keyof ReturnType<typeof taskQueues>
  /** The module whose exports are this queue's workflows (each also exported from workflows/index.ts). */
  workflowsPath: string
  activities(deps: ActivityDeps): object
  schedules(config: Config): ScheduleDefinition[]
}

const workflowsModule = (name: string) => fileURLToPath(new URL(`../workflows/${name}.ts`, import.meta.url))

export const taskQueueTable: readonly TaskQueue[] = [
  // Housekeeping: purges that must run however far behind the others are; and the hourly storage usage sample.
  {
    queue: 'platform',
    workflowsPath: workflowsModule('housekeeping'),
    activities: activitySets.housekeeping,
    schedules: (c) => [housekeepingSchedule(c), storageUsageSampleSchedule(c)],
  },
  // Provisioning and reconciliation wait on S3 endpoints; a slow region must not hold up the rest.
  { queue: 'storage', workflowsPath: workflowsModule('storage'), activities: activitySets.storage, schedules: () => [] },
  // An SMTP outage must not hold up anything else.
  { queue: 'mail', workflowsPath: workflowsModule('mail'), activities: activitySets.mail, schedules: (c) => [mailSweepSchedule(c)] },
  // Model version validation reads whole checkpoints; a big one must not hold up anything else.
  { queue: 'models', workflowsPath: workflowsModule('models'), activities: activitySets.models, schedules: () => [] },
  // Package builds stream whole checkpoints; a backlog of them must not hold up the rest.
  { queue: 'packages', workflowsPath: workflowsModule('edge-package'), activities: activitySets.packages, schedules: () => [] },
  // Webhook deliveries wait on tenants' receivers, thousands at a time; nothing else may queue behind them.
  { queue: 'webhooks', workflowsPath: workflowsModule('webhooks'), activities: activitySets.webhooks, schedules: () => [] },
  // Audit exports stream a tenant's whole trail into S3; a backlog of them must not hold up anything else.
  { queue: 'audit', workflowsPath: workflowsModule('audit-export'), activities: activitySets.audit, schedules: () => [] },
  // The re-seal after a key rotation: rare, and it must not wait behind anything.
  { queue: 'keys', workflowsPath: workflowsModule('reseal'), activities: activitySets.keys, schedules: () => [] },
  // Period closes and payment grace timers: an invoice must not wait behind builds or deliveries.
  { queue: 'billing', workflowsPath: workflowsModule('billing'), activities: activitySets.billing, schedules: (c) => [billingSweepSchedule(c)] },
]
