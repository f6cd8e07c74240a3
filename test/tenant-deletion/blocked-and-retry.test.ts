// A legal hold placed while a deletion runs stops it before its next batch (the job `blocked`, what is left stays);
// a failed job is retried and carries on from its cursor. Both through the API, as an owner who signed in again after
// the job revoked their sessions (their membership lasts until the job's last steps).
import { describe, expect, test } from 'bun:test'
import { signIn } from '../accounts/helpers'
import { useApiAndWorker } from '../support/api-and-worker'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { connectTemporal, eventually } from '../support/temporal'
import { TENANT_ID } from '../../workflows/contract'
import { tenantDeletionWorkflowId, TenantDeletionWorkflowType } from '../../workflows/contract-tenant-deletion'
import { jobEnds, jobRow, leftovers, offboarded } from './helpers'

const env = useApiAndWorker('delblock', () => ({
  WORKER_TASK_QUEUES: 'storage,deletion,offboarding',
  TENANT_DELETION_BATCH_ROWS: '10',
  TENANT_DELETION_CALL_MS: '300',
}))

/** An offboarding tenant whose deletion job failed for good at its bucket step (a region this deployment lacks). */
async function failedDeletion(rows: number) {
  const owner = await offboardingTenantWithRows(rows)
  await env.api.sql`
    insert into storage_buckets (tenant_id, kind, name, region_id, status, versioning)
    values (${owner.tenantId}, 'general', ${`rcp-nowhere-${crypto.randomUUID().slice(0, 8)}`}, 'atlantis', 'ready', false)`
  const started = await owner.client.post('/tenants/current/deletion-jobs', {})
  expect(started.status).toBe(201)
  const jobId: string = started.json.data.id
  const failed = await jobEnds(env.api.sql, jobId)
  return { owner, jobId, failed }
}

async function offboardingTenantWithRows(rows: number) {
  const owner = await tenantOwner(env.api.url)
  await env.api.sql`
    insert into events (tenant_id, type, data, dispatched_at)
    select ${owner.tenantId}, 'training_job.failed', '{}'::jsonb, now() from generate_series(1, ${rows})`
  await offboarded(env.api.sql, owner.tenantId)
  return owner
}

describe('a deletion job meets a blocker or a failure', () => {
  test('a hold placed mid-deletion stops it at the next batch; released, a new job finishes the deletion', async () => {
    const owner = await offboardingTenantWithRows(4000)
    const started = await owner.client.post('/tenants/current/deletion-jobs', {})
    expect(started.status).toBe(201)
    const jobId: string = started.json.data.id
    await eventually('rows being deleted', async () => {
      const row = await jobRow(env.api.sql, jobId)
      return row.phase === 'rows' && (row.counts['table:events'] ?? 0) > 0 ? row : undefined
    })
    // The job ended the owner's session; they sign in again and place a hold on the whole tenant.
    const again = await signIn(env.api.url, owner.email, PASSWORD)
    const hold = await again.post('/tenants/current/legal-holds', { matter: 'Acme v. Robots', reason: 'preserve', scope: { kind: 'tenant' } })
    expect(hold.status).toBe(201)

    const blocked = await jobEnds(env.api.sql, jobId)
    expect(blocked.status).toBe('blocked')
    expect(blocked.blocked_reason).toContain('legal hold')
    const left = (await leftovers(env.api.sql, owner.tenantId)).events ?? 0
    expect(left).toBeGreaterThan(0)
    await Bun.sleep(1000)
    expect((await leftovers(env.api.sql, owner.tenantId)).events).toBe(left)
    const view = await again.get(`/tenants/current/deletion-jobs/${jobId}`)
    expect(view.json.data).toMatchObject({ status: 'blocked', progress: { phase: 'rows', step: 'events' } })
    const [entry] = await env.api.sql<{ details: { code: string } }[]>`
      select details from audit_inbox where tenant_id = ${owner.tenantId} and action = 'tenant.deletion_blocked'
      union all select details from audit_log where tenant_id = ${owner.tenantId} and action = 'tenant.deletion_blocked'`
    expect(entry!.details.code).toBe('OFFBOARDING_BLOCKED_BY_LEGAL_HOLD')
    // A blocked job is not failed: it is not retried; a new one starts once the hold is released.
    expect((await again.post(`/tenants/current/deletion-jobs/${jobId}/retry`, {})).json.code).toBe('TENANT_DELETION_JOB_NOT_RETRYABLE')
    expect((await again.post('/tenants/current/deletion-jobs', {})).json.code).toBe('OFFBOARDING_BLOCKED_BY_LEGAL_HOLD')
    expect((await again.post(`/tenants/current/legal-holds/${hold.json.data.id}/release`, {})).status).toBe(200)
    const next = await again.post('/tenants/current/deletion-jobs', {})
    expect(next.status).toBe(201)
    expect((await jobEnds(env.api.sql, next.json.data.id)).status).toBe('succeeded')
    expect(await leftovers(env.api.sql, owner.tenantId)).toEqual({})
  }, 240_000)

  test('a failed job is retried where it stopped and finishes', async () => {
    const { owner, jobId, failed } = await failedDeletion(50)
    expect(failed.status).toBe('failed')
    expect(failed.error).toContain('atlantis')
    expect(failed.phase).toBe('buckets')

    const again = await signIn(env.api.url, owner.email, PASSWORD)
    await env.api.sql`update storage_buckets set region_id = 'local' where tenant_id = ${owner.tenantId}`
    const retried = await again.post(`/tenants/current/deletion-jobs/${jobId}/retry`, {})
    expect(retried.status).toBe(202)
    expect(retried.json.data).toMatchObject({ id: jobId, status: 'queued' })
    const done = await jobEnds(env.api.sql, jobId)
    expect({ status: done.status, attempts: done.attempts }).toEqual({ status: 'succeeded', attempts: 2 })
    expect(done.counts['credential:sessions']).toBeGreaterThanOrEqual(1)
    expect(await leftovers(env.api.sql, owner.tenantId)).toEqual({})
  }, 240_000)

  test('a retry that meets the failed run still closing waits for it to close, and answers 409 while it does not', async () => {
    const { owner, jobId, failed } = await failedDeletion(10)
    expect(failed.status).toBe('failed')
    const again = await signIn(env.api.url, owner.email, PASSWORD)
    await env.api.sql`update storage_buckets set region_id = 'local' where tenant_id = ${owner.tenantId}`
    const t = await connectTemporal()
    try {
      // The job's own failed run marks the job failed a moment before it closes: let it close first, so the run below
      // is the only one under the id.
      await t.client.workflow
        .getHandle(tenantDeletionWorkflowId(owner.tenantId))
        .result()
        .catch(() => {})
      // The failed run, still closing: a run under the tenant's deletion workflow id, on a queue no worker polls.
      const closing = await t.client.workflow.start(TenantDeletionWorkflowType.run, {
        workflowId: tenantDeletionWorkflowId(owner.tenantId),
        taskQueue: `nobody-${crypto.randomUUID()}`,
        args: [{ tenantId: owner.tenantId, jobId }],
        typedSearchAttributes: [{ key: TENANT_ID, value: owner.tenantId }],
      })
      const stuck = await again.post(`/tenants/current/deletion-jobs/${jobId}/retry`, {})
      expect({ status: stuck.status, code: stuck.json.code }).toEqual({ status: 409, code: 'TENANT_DELETION_JOB_CONFLICT' })
      expect((await jobRow(env.api.sql, jobId)).status).toBe('failed')

      // It closes while the next retry waits: the retry starts the job once it has.
      const retrying = again.post(`/tenants/current/deletion-jobs/${jobId}/retry`, {})
      await eventually('the retry waiting for the closing run', async () => ((await jobRow(env.api.sql, jobId)).status === 'queued' ? true : undefined))
      await closing.terminate('the failed run closed')
      const retried = await retrying
      expect(retried.status).toBe(202)
      expect((await jobEnds(env.api.sql, jobId)).status).toBe('succeeded')
      expect(await leftovers(env.api.sql, owner.tenantId)).toEqual({})
    } finally {
      await t.close()
    }
  }, 240_000)
})
