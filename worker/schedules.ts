// The worker owns the housekeeping schedule: every start reconciles it with the configuration, so changing
// HOUSEKEEPING_INTERVAL_MINUTES and restarting the worker is the whole deployment story.
import {
  ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy,
  type Client, type ScheduleDescription, type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client'
import { TypedSearchAttributes, type SearchAttributePair, type Workflow } from '@temporalio/common'
import type { Config } from '../api/platform/config'
import type { Logger } from '../api/platform/log'
import {
  housekeepingScheduleId, SYSTEM_TENANT, taskQueues, TENANT_ID, workflowIds, WorkflowType, type HousekeepingInput,
} from '../workflows/contract'

export type ScheduleOutcome = 'created' | 'updated' | 'unchanged' | 'deleted' | 'disabled'

const NOTE = 'Managed by the worker (worker/schedules.ts) from HOUSEKEEPING_INTERVAL_MINUTES: a pause is kept, other edits may be reverted at worker start.'

function desired(config: Config) {
  const everyMs = config.HOUSEKEEPING_INTERVAL_MINUTES * 60_000
  const action: ScheduleOptionsStartWorkflowAction<Workflow> = {
    type: 'startWorkflow',
    workflowType: WorkflowType.housekeeping,
    taskQueue: taskQueues(config).platform,
    workflowId: workflowIds.housekeeping(config),
    args: [{} satisfies HousekeepingInput],
    typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
    // Bounds a wedged run: with overlap SKIP, a run that never ends would silently stop all later ones.
    workflowExecutionTimeout: '2 hours',
  }
  return {
    everyMs,
    spec: { intervals: [{ every: everyMs }] },
    action,
    // SKIP: a slow purge never piles up concurrent purges. A catch-up window of one interval means an
    // outage is followed by a single run, not a burst of missed ones.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: everyMs },
  }
}

function tenantOf(attrs: SearchAttributePair[] | TypedSearchAttributes | undefined): unknown {
  if (attrs instanceof TypedSearchAttributes) return attrs.get(TENANT_ID)
  return attrs?.find((p) => p.key.name === TENANT_ID.name)?.value
}

function drift(current: ScheduleDescription, want: ReturnType<typeof desired>): string[] {
  const out: string[] = []
  const intervals = current.spec.intervals ?? []
  if (intervals.length !== 1 || intervals[0]!.every !== want.everyMs || (current.spec.calendars?.length ?? 0) > 0) out.push('interval')
  if (current.action.workflowType !== want.action.workflowType) out.push('workflowType')
  if (current.action.taskQueue !== want.action.taskQueue) out.push('taskQueue')
  if (current.action.workflowId !== want.action.workflowId) out.push('workflowId')
  if (tenantOf(current.action.typedSearchAttributes) !== SYSTEM_TENANT) out.push('searchAttributes')
  if (current.policies.overlap !== want.policies.overlap) out.push('overlap')
  if (current.policies.catchupWindow !== want.policies.catchupWindow) out.push('catchupWindow')
  return out
}

/** Creates the housekeeping schedule if missing, updates it if it drifted from the configuration, and
 *  deletes it when HOUSEKEEPING_INTERVAL_MINUTES is 0. Safe to run from several worker replicas at once.
 *  An operator's pause is preserved across updates. */
export async function ensureHousekeepingSchedule(client: Client, config: Config, log: Logger): Promise<ScheduleOutcome> {
  const scheduleId = housekeepingScheduleId(config)
  const handle = client.schedule.getHandle(scheduleId)
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return undefined
    throw err
  })

  if (config.HOUSEKEEPING_INTERVAL_MINUTES === 0) {
    if (!current) return 'disabled'
    await handle.delete().catch((err) => { if (!(err instanceof ScheduleNotFoundError)) throw err })
    log.info('housekeeping schedule deleted: HOUSEKEEPING_INTERVAL_MINUTES is 0', { scheduleId })
    return 'deleted'
  }

  const want = desired(config)
  if (!current) {
    try {
      await client.schedule.create({
        scheduleId,
        spec: want.spec,
        action: want.action,
        policies: want.policies,
        memo: { description: 'Purges expired idempotency keys and expired or long-revoked sessions.', managedBy: 'worker/schedules.ts' },
        state: { note: NOTE },
      })
    } catch (err) {
      // Another replica won the race; its schedule is built from the same configuration.
      if (err instanceof ScheduleAlreadyRunning) return 'unchanged'
      throw err
    }
    log.info('housekeeping schedule created', { scheduleId, everyMinutes: config.HOUSEKEEPING_INTERVAL_MINUTES })
    return 'created'
  }

  const changed = drift(current, want)
  if (changed.length === 0) return 'unchanged'
  await handle.update((prev) => ({
    ...prev,
    spec: want.spec,
    action: want.action,
    policies: want.policies,
    state: { paused: prev.state.paused, note: prev.state.paused ? prev.state.note : NOTE },
  }))
  log.info('housekeeping schedule updated', { scheduleId, changed, everyMinutes: config.HOUSEKEEPING_INTERVAL_MINUTES })
  return 'updated'
}
