// The mail sweep schedule: every minute, restart the send of outbox rows whose start after commit was lost.
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client'
import type { Config } from '../api/platform/config'
import type { Logger } from '../api/platform/log'
import { SYSTEM_TENANT, taskQueues, TENANT_ID } from '../workflows/contract'
import { MAIL_SWEEP_EVERY_MS, mailSweepScheduleId, MailWorkflowType } from '../workflows/contract-mail'

/** Creates the schedule when missing; a replica racing us creates the same one. Its shape is fixed, so there
 *  is nothing to reconcile beyond existence and the task queue. */
export async function ensureMailSweepSchedule(client: Client, config: Config, log: Logger): Promise<'created' | 'updated' | 'unchanged'> {
  const scheduleId = mailSweepScheduleId(config)
  const handle = client.schedule.getHandle(scheduleId)
  const action = {
    type: 'startWorkflow' as const,
    workflowType: MailWorkflowType.sweep,
    taskQueue: taskQueues(config).mail,
    workflowId: scheduleId,
    args: [],
    typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
    workflowExecutionTimeout: '10 minutes',
  }
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return undefined
    throw err
  })
  if (current) {
    if (current.action.taskQueue === action.taskQueue && current.action.workflowType === action.workflowType) return 'unchanged'
    await handle.update((prev) => ({ ...prev, action }))
    log.info('mail sweep schedule updated', { scheduleId })
    return 'updated'
  }
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: MAIL_SWEEP_EVERY_MS }] },
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: MAIL_SWEEP_EVERY_MS },
      state: { note: 'Managed by the worker (worker/mail-schedule.ts).' },
    })
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) return 'unchanged'
    throw err
  }
  log.info('mail sweep schedule created', { scheduleId })
  return 'created'
}
