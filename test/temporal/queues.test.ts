import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ScheduleOverlapPolicy } from '@temporalio/client'
import { createActivities } from '../../activities'
import { createDb, type Sql } from '../../api/platform/db'
import { loadConfig } from '../../api/platform/config'
import { createLogger } from '../../api/platform/log'
import { composeServices } from '../../api/compose'
import { createWorkerMetrics } from '../../worker/metrics'
import { ensureSchedule } from '../../worker/ensure-schedule'
import { taskQueueTable } from '../../worker/queues'
import { polledQueues, startWorker } from '../../worker/run'
import { mailSweepSchedule } from '../../worker/schedules'
import * as allWorkflows from '../../workflows'
import { SYSTEM_TENANT, taskQueues, TENANT_ID, workflowIds, WorkflowType } from '../../workflows/contract'
import { connectTemporal, eventually, type TestTemporal } from '../support/temporal'

let t: TestTemporal
let sql: Sql
beforeAll(async () => {
  t = await connectTemporal()
  sql = createDb(t.config.DATABASE_URL, { max: 1 })
})
afterAll(async () => {
  await sql.end({ timeout: 5 })
  await t.close()
})

const sorted = (xs: Iterable<string>) => [...xs].sort()

describe('the task-queue table', () => {
  test('every activity is registered on exactly one queue, and every workflow runs on exactly one', async () => {
    const deps = { ...composeServices(t.config, sql, createLogger('silent'), t.client), activityMetrics: createWorkerMetrics(sql) }
    const perQueue = taskQueueTable.map((q) => Object.keys(q.activities(deps)))
    expect(sorted(perQueue.flat())).toEqual(sorted(Object.keys(createActivities(deps))))
    const workflows = await Promise.all(taskQueueTable.map(async (q) => Object.keys(await import(q.workflowsPath))))
    expect(sorted(workflows.flat())).toEqual(sorted(Object.keys(allWorkflows)))
    expect(sorted(taskQueueTable.map((q) => q.queue))).toEqual(sorted(Object.keys(taskQueues(t.config))))
  })

  test("a workflow started on another queue is not run there: that queue's worker does not have it", async () => {
    const handle = await t.client.workflow.start(WorkflowType.housekeeping, {
      workflowId: workflowIds.housekeeping(t.config, `wrong-queue-${crypto.randomUUID()}`),
      taskQueue: taskQueues(t.config).mail,
      args: [{}],
      typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
      workflowExecutionTimeout: '1 minute',
    })
    try {
      const failure = await eventually('the failed workflow task', async () => {
        const events = (await handle.fetchHistory()).events ?? []
        const failed = events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes
        return failed ? (failed.failure?.message ?? '') : undefined
      })
      expect(failure).toContain(WorkflowType.housekeeping)
      expect((await handle.describe()).status.name).toBe('RUNNING')
    } finally {
      await handle.terminate('test done').catch(() => {})
    }
  })
})

describe('WORKER_TASK_QUEUES', () => {
  test('a worker polls the queues it names and no other', async () => {
    const config = loadConfig({
      ...process.env,
      LOG_LEVEL: 'silent',
      TEMPORAL_TASK_QUEUE_PREFIX: `polled-${crypto.randomUUID().slice(0, 8)}`,
      WORKER_TASK_QUEUES: 'storage,mail',
    })
    const worker = await startWorker(config, { sql, schedules: false, log: createLogger('silent') })
    try {
      expect(sorted(Object.keys(worker.workers))).toEqual(['mail', 'storage'])
      const names = taskQueues(config)
      const pollers = async (queue: string) =>
        (await t.client.workflowService.describeTaskQueue({ namespace: config.TEMPORAL_NAMESPACE, taskQueue: { name: queue }, taskQueueType: 1 })).pollers ?? []
      await eventually('the storage queue polled', async () => ((await pollers(names.storage)).length > 0 ? true : undefined))
      await eventually('the mail queue polled', async () => ((await pollers(names.mail)).length > 0 ? true : undefined))
      // Polled by then if this worker polled it: its workers start together.
      expect(await pollers(names.models)).toEqual([])
      expect(await pollers(names.packages)).toEqual([])
    } finally {
      await worker.shutdown()
    }
  })

  test('empty means every queue; a name that is no queue stops the start, naming it', () => {
    expect(polledQueues([]).map((q) => q.queue)).toEqual(taskQueueTable.map((q) => q.queue))
    expect(polledQueues(loadConfig({ ...process.env, WORKER_TASK_QUEUES: ' packages , webhooks ' }).WORKER_TASK_QUEUES).map((q) => q.queue)).toEqual([
      'packages',
      'webhooks',
    ])
    expect(() => polledQueues(['storage', 'pakages'])).toThrow(/WORKER_TASK_QUEUES names no queue: pakages/)
  })
})

describe('ensureSchedule', () => {
  test('reverts an edited interval or policy of a fixed schedule (the mail sweep) and keeps a pause', async () => {
    const config = { ...t.config, TEMPORAL_TASK_QUEUE_PREFIX: `sched-mail-${crypto.randomUUID().slice(0, 8)}` }
    const log = createLogger('silent')
    const want = mailSweepSchedule(config)
    const handle = t.client.schedule.getHandle(want.scheduleId)
    try {
      expect(await ensureSchedule(t.client, want, log)).toBe('created')
      expect(await ensureSchedule(t.client, want, log)).toBe('unchanged')
      await handle.update((prev) => ({
        ...prev,
        spec: { intervals: [{ every: '5 minutes' }] },
        policies: { ...prev.policies, overlap: ScheduleOverlapPolicy.ALLOW_ALL },
      }))
      // A schedule's state settles shortly after the call; the worker meets an operator's edit long after. The edit
      // carries the state it read, so the pause waits until the edit has shown: else an edit applied after the pause
      // could carry the old, unpaused state over it (seen once on a loaded machine).
      await eventually('the edit to show', async () => ((await handle.describe()).policies.overlap === ScheduleOverlapPolicy.ALLOW_ALL ? true : undefined))
      await handle.pause('operator pause')
      await eventually('the pause to show', async () => ((await handle.describe()).state.paused ? true : undefined))
      expect(await ensureSchedule(t.client, want, log)).toBe('updated')
      const restored = await handle.describe()
      expect(restored.spec.intervals?.map((i) => i.every)).toEqual([want.everyMs])
      expect(restored.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP)
      expect(restored.state.paused).toBe(true)
      expect(await ensureSchedule(t.client, want, log)).toBe('unchanged')
    } finally {
      await handle.delete().catch(() => {})
    }
  })
})
