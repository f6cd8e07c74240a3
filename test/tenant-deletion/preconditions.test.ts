// The attacker's view of POST /v1/tenants/current/deletion-jobs, written first: an admin deleting, a tenant that is
// not offboarding, a tenant under a legal hold, a tenant with work still running, a second job beside an open one,
// another tenant's owner reading or retrying our job.
import { describe, expect, test } from 'bun:test'
import { TENANT_ID } from '../../workflows/contract'
import { memberOf } from '../accounts/helpers'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'
import { connectTemporal, eventually } from '../support/temporal'
import { activityContext } from '../../api/identity/context'
import { activeTenantWork, startDeletionAfterWindow } from '../../api/tenant-deletion/service'
import { jobEnds, offboarded } from './helpers'

const api = useApi()
const offboarding = (tenantId: string) => offboarded(api.sql, tenantId)
const start = (client: { post: (p: string, b: unknown) => Promise<{ status: number; json: { code?: string; data?: { id: string } } }> }) =>
  client.post('/tenants/current/deletion-jobs', {})

describe('who may delete a tenant, and when', () => {
  test('an admin (not owner) is refused 403, before anything else is judged', async () => {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, owner.client, 'admin')
    await offboarding(owner.tenantId)
    const res = await start(admin.client)
    expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_DENIED'])
    expect(await api.sql`select 1 from tenant_deletion_jobs where tenant_id = ${owner.tenantId}`).toHaveLength(0)
  }, 60_000)

  test('a tenant that is not offboarding: 400 TENANT_NOT_OFFBOARDING', async () => {
    const owner = await tenantOwner(api.url)
    const res = await start(owner.client)
    expect([res.status, res.json.code]).toEqual([400, 'TENANT_NOT_OFFBOARDING'])
  })

  test('an offboarding tenant whose retention window has not ended: 400 RETENTION_WINDOW_NOT_ELAPSED', async () => {
    const owner = await tenantOwner(api.url)
    await offboarded(api.sql, owner.tenantId, false)
    const res = await start(owner.client)
    expect([res.status, res.json.code]).toEqual([400, 'RETENTION_WINDOW_NOT_ELAPSED'])
    expect(await api.sql`select 1 from tenant_deletion_jobs where tenant_id = ${owner.tenantId}`).toHaveLength(0)
  })

  test("the window's end starts the job by itself (as the offboarding workflow's last activity calls it), once", async () => {
    const owner = await tenantOwner(api.url)
    await offboarded(api.sql, owner.tenantId)
    const actor = activityContext(`tenant-offboarding/${owner.tenantId}/test`)
    const job = await startDeletionAfterWindow(api.deps, actor, owner.tenantId)
    expect(job).toMatchObject({ trigger: 'window_elapsed', requested_by: null })
    expect(await startDeletionAfterWindow(api.deps, actor, owner.tenantId)).toBeNull()
    expect((await jobEnds(api.sql, job!.id)).status).toBe('succeeded')
    expect(await api.sql`select 1 from tenants where id = ${owner.tenantId}`).toHaveLength(0)
    expect(await startDeletionAfterWindow(api.deps, actor, owner.tenantId)).toBeNull()
  }, 120_000)

  test('under an active legal hold: 409 OFFBOARDING_BLOCKED_BY_LEGAL_HOLD; once released, the job starts', async () => {
    const owner = await tenantOwner(api.url)
    const hold = await owner.client.post('/tenants/current/legal-holds', { matter: 'Acme v. Robots', reason: 'litigation', scope: { kind: 'tenant' } })
    expect(hold.status).toBe(201)
    await offboarding(owner.tenantId)
    const res = await start(owner.client)
    expect([res.status, res.json.code]).toEqual([409, 'OFFBOARDING_BLOCKED_BY_LEGAL_HOLD'])
    expect((await owner.client.post(`/tenants/current/legal-holds/${hold.json.data.id}/release`, {})).status).toBe(200)
    const ok = await start(owner.client)
    expect(ok.status).toBe(201)
    expect((await jobEnds(api.sql, ok.json.data!.id)).status).toBe('succeeded')
  }, 120_000)

  test('with a workflow of the tenant still running: 409 DELETION_BLOCKED_BY_ACTIVE_WORK until it ends', async () => {
    const owner = await tenantOwner(api.url)
    await offboarding(owner.tenantId)
    const t = await connectTemporal()
    try {
      const running = await t.client.workflow.start('exportAuditLogWorkflow', {
        workflowId: `audit-export/${owner.tenantId}/${crypto.randomUUID()}`,
        taskQueue: `nobody-${crypto.randomUUID()}`,
        args: [{ tenantId: owner.tenantId, exportId: crypto.randomUUID() }],
        typedSearchAttributes: [{ key: TENANT_ID, value: owner.tenantId }],
      })
      // Visibility lists a workflow a moment after it starts; the work a deletion meets started long before (the gate
      // refuses new work once offboarding), so the request is sent only once visibility shows it, as it would then.
      await eventually('visibility to list the running workflow', async () => ((await activeTenantWork(api.deps, owner.tenantId)) ? true : undefined))
      const refused = await start(owner.client)
      expect([refused.status, refused.json.code]).toEqual([409, 'DELETION_BLOCKED_BY_ACTIVE_WORK'])
      expect(await api.sql`select 1 from tenant_deletion_jobs where tenant_id = ${owner.tenantId}`).toHaveLength(0)
      await running.terminate('test')
      const started = await eventually('the job to start once the work ended', async () => {
        const res = await start(owner.client)
        return res.status === 201 ? res : undefined
      })
      expect((await jobEnds(api.sql, started.json.data!.id)).status).toBe('succeeded')
    } finally {
      await t.close()
    }
  }, 120_000)

  test('a second job while one is open: 409 TENANT_DELETION_JOB_CONFLICT', async () => {
    const owner = await tenantOwner(api.url)
    await offboarding(owner.tenantId)
    await api.sql`insert into tenant_deletion_jobs (tenant_id, trigger) values (${owner.tenantId}, 'request')`
    const res = await start(owner.client)
    expect([res.status, res.json.code]).toEqual([409, 'TENANT_DELETION_JOB_CONFLICT'])
  })

  test("another tenant's owner cannot read or retry our job (404); retrying what is not failed is 409", async () => {
    const owner = await tenantOwner(api.url)
    const stranger = await tenantOwner(api.url)
    await offboarding(owner.tenantId)
    await offboarding(stranger.tenantId)
    const [job] = await api.sql<{ id: string }[]>`insert into tenant_deletion_jobs (tenant_id, trigger) values (${owner.tenantId}, 'request') returning id`
    const read = await owner.client.get(`/tenants/current/deletion-jobs/${job!.id}`)
    expect(read.status).toBe(200)
    expect(read.json.data).toMatchObject({ id: job!.id, status: 'queued', progress: { phase: 'credentials', rowsDeleted: 0 } })
    for (const res of [
      await stranger.client.get(`/tenants/current/deletion-jobs/${job!.id}`),
      await stranger.client.post(`/tenants/current/deletion-jobs/${job!.id}/retry`, {}),
      await owner.client.get(`/tenants/current/deletion-jobs/${crypto.randomUUID()}`),
      await owner.client.post(`/tenants/current/deletion-jobs/${crypto.randomUUID()}/retry`, {}),
      await owner.client.get('/tenants/current/deletion-jobs/not-a-uuid'),
    ]) {
      expect([res.status, res.json.code]).toEqual([404, 'TENANT_DELETION_JOB_NOT_FOUND'])
    }
    const notFailed = await owner.client.post(`/tenants/current/deletion-jobs/${job!.id}/retry`, {})
    expect([notFailed.status, notFailed.json.code]).toEqual([409, 'TENANT_DELETION_JOB_NOT_RETRYABLE'])
  })
})
