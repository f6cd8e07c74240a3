// The one way the worker keeps a Temporal schedule in line with its definition (worker/schedules.ts): every
// start reconciles, so changing the configuration and restarting the worker is the whole deployment story.
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type Client,
  type ScheduleDescription,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleOverlapPolicy,
} from '@temporalio/client'
import { TypedSearchAttributes, type SearchAttributePair, type Workflow } from '@temporalio/common'
import type { Logger } from '../api/platform/log'
import { TENANT_ID } from '../workflows/contract'

export type ScheduleOutcome = 'created' | 'updated' | 'unchanged' | 'deleted' | 'disabled'

/** What a schedule must look like. Everything here is compared with the server's copy on every start. */
export interface ScheduleDefinition {
  scheduleId: string
  /** For the logs: "<name> schedule created". */
  name: string
  /** False: the schedule must not exist (its interval is configured as 0). */
  enabled: boolean
  everyMs: number
  action: ScheduleOptionsStartWorkflowAction<Workflow>
  overlap: ScheduleOverlapPolicy
  catchupWindowMs: number
  /** Shown in the Temporal UI; kept while an operator has paused the schedule (their note explains the pause). */
  note: string
  memo?: Record<string, unknown>
}

function tenantOf(attrs: SearchAttributePair[] | TypedSearchAttributes | undefined): unknown {
  if (attrs instanceof TypedSearchAttributes) return attrs.get(TENANT_ID)
  return attrs?.find((p) => p.key.name === TENANT_ID.name)?.value
}

/** The fields that differ between the server's schedule and its definition (none: leave it alone). */
export function drift(current: ScheduleDescription, want: ScheduleDefinition): string[] {
  const out: string[] = []
  const intervals = current.spec.intervals ?? []
  if (intervals.length !== 1 || intervals[0]!.every !== want.everyMs || (current.spec.calendars?.length ?? 0) > 0) out.push('interval')
  if (current.action.workflowType !== want.action.workflowType) out.push('workflowType')
  if (current.action.taskQueue !== want.action.taskQueue) out.push('taskQueue')
  if (current.action.workflowId !== want.action.workflowId) out.push('workflowId')
  if (tenantOf(current.action.typedSearchAttributes) !== tenantOf(want.action.typedSearchAttributes)) out.push('searchAttributes')
  if (current.policies.overlap !== want.overlap) out.push('overlap')
  if (current.policies.catchupWindow !== want.catchupWindowMs) out.push('catchupWindow')
  return out
}

/** Creates the schedule if missing, updates it if it drifted from its definition, and deletes it when the
 *  definition is disabled. Safe to run from several worker replicas at once. An operator's pause is preserved
 *  across updates. */
export async function ensureSchedule(client: Client, want: ScheduleDefinition, log: Logger): Promise<ScheduleOutcome> {
  const { scheduleId } = want
  const handle = client.schedule.getHandle(scheduleId)
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return undefined
    throw err
  })

  if (!want.enabled) {
    if (!current) return 'disabled'
    await handle.delete().catch((err) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err
    })
    log.info(`${want.name} schedule deleted: disabled by the configuration`, { scheduleId })
    return 'deleted'
  }

  const spec = { intervals: [{ every: want.everyMs }] }
  const policies = { overlap: want.overlap, catchupWindow: want.catchupWindowMs }
  if (!current) {
    try {
      await client.schedule.create({ scheduleId, spec, action: want.action, policies, memo: want.memo, state: { note: want.note } })
    } catch (err) {
      // Another replica won the race; its schedule is built from the same definition.
      if (err instanceof ScheduleAlreadyRunning) return 'unchanged'
      throw err
    }
    log.info(`${want.name} schedule created`, { scheduleId, everyMs: want.everyMs })
    return 'created'
  }

  const changed = drift(current, want)
  if (changed.length === 0) return 'unchanged'
  await handle.update((prev) => ({
    ...prev,
    spec,
    action: want.action,
    policies,
    state: { paused: prev.state.paused, note: prev.state.paused ? prev.state.note : want.note },
  }))
  log.info(`${want.name} schedule updated`, { scheduleId, changed, everyMs: want.everyMs })
  return 'updated'
}
