// Kills the worker process in the middle of a tenant deletion, twice (while it empties a bucket, then while it deletes
// rows), and starts another each time: the job finishes with every count exactly what was there before it started
// (nothing deleted or counted twice), nothing of the tenant left, and its history continued as new along the way.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { DeletionReceipt } from '../../activities/tenant-deletion/receipt'
import { TABLE_STEPS } from '../../api/tenant-deletion/steps'
import { TENANT_ID, taskQueues } from '../../workflows/contract'
import { tenantDeletionWorkflowId, TenantDeletionWorkflowType } from '../../workflows/contract-tenant-deletion'
import { tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { killableWorkers } from '../support/worker-process'
import { localS3, upload, useApiAndTemporal } from '../storage/helpers'
import { filledStorage, jobEnds, jobRow, leftovers, offboarded } from './helpers'

const prefix = `rcp-delkill-${crypto.randomUUID().slice(0, 8)}`
const s3 = localS3()
const OBJECTS = 1500
const EVENTS = 20_000
const HEARTBEAT_TIMEOUT_MS = 10_000
// Small batches and short calls: the job is long enough to be interrupted, and its history grows fast.
const workers = killableWorkers('deletion-kill', {
  TEMPORAL_TASK_QUEUE_PREFIX: prefix,
  WORKER_TASK_QUEUES: 'storage,deletion,offboarding',
  TENANT_DELETION_BATCH_ROWS: '25',
  TENANT_DELETION_BATCH_OBJECTS: '10',
  TENANT_DELETION_CALL_MS: '300',
})
const env = useApiAndTemporal({ TEMPORAL_TASK_QUEUE_PREFIX: prefix })

describe('a worker killed mid-deletion', () => {
  test('the next worker resumes from the committed cursor: exact counts, nothing left, history continued as new', async () => {
    let worker = await workers.start('worker-1')
    const owner = await tenantOwner(env.api.url)
    const storage = await filledStorage(owner, s3, { general: 10, dataset: 2 })
    await upload(
      s3,
      storage.general,
      Array.from({ length: OBJECTS }, (_, i) => `bulk/${i}`),
    )
    await env.api.sql`
      insert into events (tenant_id, type, data, dispatched_at)
      select ${owner.tenantId}, 'training_job.failed', '{}'::jsonb, now() from generate_series(1, ${EVENTS})`
    await offboarded(env.api.sql, owner.tenantId)
    const before: Record<string, number> = {}
    for (const t of TABLE_STEPS) {
      const [r] = await env.api.sql.unsafe<{ n: number }[]>(`select count(*)::int as n from "${t}" where tenant_id = $1`, [owner.tenantId])
      before[t] = r!.n
    }
    expect(before.events).toBeGreaterThanOrEqual(EVENTS)

    const [job] = await env.api.sql<{ id: string }[]>`
      insert into tenant_deletion_jobs (tenant_id, trigger) values (${owner.tenantId}, 'request') returning id`
    const workflowId = tenantDeletionWorkflowId(owner.tenantId)
    await env.t.client.workflow.start(TenantDeletionWorkflowType.run, {
      workflowId,
      taskQueue: taskQueues({ TEMPORAL_TASK_QUEUE_PREFIX: prefix }).deletion,
      // The server notices each killed worker when the running call's heartbeat timeout runs out: 10 s, not 30.
      args: [{ tenantId: owner.tenantId, jobId: job!.id, historyLimit: 40, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS }],
      typedSearchAttributes: [{ key: TENANT_ID, value: owner.tenantId }],
    })

    // Each kill waits for progress in the phase, and for the server to hold a heartbeat of the running call.
    for (const [phase, key, total] of [
      ['buckets', 'bucket:general', OBJECTS + 10],
      ['rows', 'table:events', EVENTS],
    ] as const) {
      await eventually(
        `deletion under way in ${phase}`,
        async () => {
          const row = await jobRow(env.api.sql, job!.id)
          const n = row.counts[key] ?? 0
          return row.phase === phase && n > 0 && n < total * 0.7 ? row : undefined
        },
        120_000,
      )
      await eventually('a heartbeat at the server', async () => {
        const { raw } = await env.t.client.workflow.getHandle(workflowId).describe()
        return raw.pendingActivities?.some((a) => (a.heartbeatDetails?.payloads?.length ?? 0) > 0) || undefined
      })
      await worker.stop()
      expect((await jobRow(env.api.sql, job!.id)).status).toBe('running')
      worker = await workers.start(`worker-after-${phase}`)
    }

    const done = await jobEnds(env.api.sql, job!.id, 240_000)
    expect({ status: done.status, error: done.error }).toEqual({ status: 'succeeded', error: null })
    const receipt = (done.receipt as { receipt: DeletionReceipt }).receipt
    const deleted: Record<string, number> = Object.fromEntries(receipt.tables.map((t) => [t.table, t.rowsDeleted]))
    // Usage events may still arrive until the deletion reaches their table (the API flushes its request tally once a
    // USAGE_FLUSH_SECONDS), so that count can only have grown since the snapshot; every other table's is exact.
    expect(deleted.usage_events).toBeGreaterThanOrEqual(before.usage_events ?? 0)
    expect({ ...deleted, usage_events: 0 }).toEqual({ ...before, usage_events: 0 })
    expect(receipt.buckets.find((b) => b.kind === 'general')!.objectsDeleted).toBe(OBJECTS + 10)
    expect(receipt.buckets.find((b) => b.kind === 'dataset')!.objectsDeleted).toBe(5)
    expect(await leftovers(env.api.sql, owner.tenantId)).toEqual({})
    for (const b of [storage.general, storage.dataset, storage.exportBucket]) expect(await s3.bucketExists(b)).toBe(false)

    // The run that finished is not the first: the history was continued as new.
    const runs: string[] = []
    for await (const wf of env.t.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(wf.runId)
    expect(runs.length).toBeGreaterThan(1)
    // Every batch call of every run was scheduled with the input's heartbeat timeout.
    const timeouts = new Set<number>()
    for (const runId of runs) {
      const history = await env.t.client.workflow.getHandle(workflowId, runId).fetchHistory()
      for (const e of history.events ?? []) {
        const a = e.activityTaskScheduledEventAttributes
        if (a?.activityType?.name === 'deleteTenantBatches') timeouts.add(Number(a.heartbeatTimeout?.seconds ?? 0) * 1000)
      }
    }
    expect([...timeouts]).toEqual([HEARTBEAT_TIMEOUT_MS])
    // The workers after each kill resumed a heartbeated call.
    const resumed = ['worker-after-buckets', 'worker-after-rows'].map((name) =>
      readFileSync(`${workers.logDir}/${name}.log`, 'utf8')
        .split('\n')
        .filter((l) => l.includes('tenant deletion resumes')),
    )
    expect(resumed.flat().length).toBeGreaterThanOrEqual(1)
  }, 600_000)
})
