// Kills a worker process in the middle of a reconciliation walk and starts another: the job must finish
// once, with exact counts, resumed from the last heartbeat rather than from the start.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { killableWorkers } from '../support/worker-process'
import { storageWorkflowIds } from '../../workflows/contract-storage'
import { eventually } from '../support/temporal'
import { jobDone, localS3, provisionedTenant, upload, useApiAndTemporal } from './helpers'

const OBJECTS = 3000
const prefix = `rcp-crash-${crypto.randomUUID().slice(0, 8)}`
const s3 = localS3()

// Tiny pages make the walk long enough to be interrupted.
const workers = killableWorkers('crash-worker', { TEMPORAL_TASK_QUEUE_PREFIX: prefix, WORKER_TASK_QUEUES: 'storage', STORAGE_RECONCILE_PAGE_SIZE: '5' })

const env = useApiAndTemporal({ TEMPORAL_TASK_QUEUE_PREFIX: prefix })

describe('a worker killed mid-reconciliation', () => {
  test('the job finishes once on the next worker, resuming from its checkpoint', async () => {
    const first = await workers.start('worker-1')
    const tenant = await provisionedTenant(env.api.url)
    const bucket = tenant.buckets.bucket!.name
    const keys = Array.from({ length: OBJECTS }, (_, i) => `obj/${String(i).padStart(5, '0')}`)
    await upload(s3, bucket, keys)
    // Every other object is recorded, plus three the bucket lacks.
    const expected = [...keys.filter((_, i) => i % 2 === 0), 'obj/missing-1', 'obj/missing-2', 'zzz']
    await env.api
      .sql`insert into storage_expected_objects ${env.api.sql(expected.map((key) => ({ tenant_id: tenant.tenantId, bucket, key, kind: 'artifact' })))}`

    const res = await tenant.billing.post('/tenants/current/storage-reconciliation-jobs', {})
    const jobId: string = res.json.data.job.id
    const midway = await eventually('the walk to be under way', async () => {
      const [row] = await env.api.sql<
        { status: string; objects_scanned: number }[]
      >`select status, objects_scanned from storage_reconciliation_jobs where id = ${jobId}`
      return row && row.objects_scanned > 0 ? row : undefined
    })
    // The row is written as the heartbeat is handed to the SDK, which sends it on its own schedule: kill only once
    // the server holds a checkpoint, or the retry has nothing to resume from (under load the kill can come first).
    const handle = env.t.client.workflow.getHandle(storageWorkflowIds.reconcile(tenant.tenantId, jobId))
    await eventually('a heartbeat at the server', async () => {
      const { raw } = await handle.describe()
      return raw.pendingActivities?.some((a) => (a.heartbeatDetails?.payloads?.length ?? 0) > 0) || undefined
    })
    await first.stop()
    expect(midway.status).toBe('running')
    expect(midway.objects_scanned).toBeLessThan(OBJECTS)
    const [afterKill] = await env.api.sql<{ status: string }[]>`select status from storage_reconciliation_jobs where id = ${jobId}`
    expect(afterKill!.status).toBe('running')

    const second = await workers.start('worker-2')
    const done = await jobDone(tenant.billing, jobId, 90_000)
    expect(done).toMatchObject({ status: 'succeeded', objectsScanned: OBJECTS, orphanCount: OBJECTS / 2, missingCount: 3 })
    const [findings] = await env.api.sql<{ n: number }[]>`select count(*)::int as n from storage_reconciliation_findings where job_id = ${jobId}`
    expect(findings!.n).toBe(OBJECTS / 2 + 3)

    // One workflow run; the walk activity ran more than once and the retry resumed past the start.
    await handle.result()
    const history = await handle.fetchHistory()
    const walkStarts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 1)
    expect(Math.max(...walkStarts)).toBeGreaterThan(1)
    const runs: string[] = []
    for await (const wf of env.t.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) runs.push(wf.runId)
    expect(runs.length).toBeLessThanOrEqual(1)
    const resumed = readFileSync(second.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('reconciliation resumes'))
      .map((l) => JSON.parse(l))
    expect(resumed.length).toBe(1)
    expect(resumed[0].objectsScanned).toBeGreaterThan(0)
  }, 300_000)
})
