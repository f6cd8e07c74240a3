// A tenant deleted end to end through the API, on a worker that also dispatches webhooks: its credentials die first,
// its endpoints get a last signed tenant.deleted event, its buckets are emptied (every version) and removed, every row
// of it is gone, and a signed receipt says so. Then the attacker's view: its PAT, its session, its webhook secret and a
// presigned URL of its objects are all dead, while another tenant keeps everything.
import { describe, expect, test } from 'bun:test'
import { verifyChain } from '../../api/audit/queries'
import { tenantDeletionWorkflowId } from '../../workflows/contract-tenant-deletion'
import { verifyReceipt } from '../../activities/tenant-deletion/receipt'
import type { DeletionReceipt } from '../../activities/tenant-deletion/receipt'
import { TABLE_STEPS } from '../../api/tenant-deletion/steps'
import { sha256 } from '../../api/platform/crypto'
import { Client } from '../support/client'
import { PASSWORD, patFor, uniqueEmail } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { sealAudit } from '../support/audit'
import { eventually } from '../support/temporal'
import { localS3 } from '../storage/helpers'
import { Receiver, useDeliveryEnv, webhookTenant } from '../webhooks/delivery-helpers'
import { filledStorage, jobEnds, leftovers, someRows, offboarded } from './helpers'

const env = useDeliveryEnv({ TENANT_DELETION_BATCH_ROWS: '7', TENANT_DELETION_BATCH_OBJECTS: '4', WORKER_TASK_QUEUES: '' })
const s3 = localS3()
const DAY = 86_400_000

describe('a tenant deletion job', () => {
  test('deletes everything of the tenant, signs a receipt, and leaves its credentials, secret and URLs dead', async () => {
    const receiver = await new Receiver(env.certs).start()
    const owner = await webhookTenant(env.api)
    const other = await webhookTenant(env.api)
    // Subscribed to something else: the final event reaches every endpoint.
    const endpoint = await owner.register({ url: receiver.url(), events: ['training_job.completed'] })
    receiver.secrets = [endpoint.secret]
    const storage = await filledStorage(owner, s3)
    await someRows(owner)
    await someRows(other)
    const pat = owner.client.withBearer((await patFor(owner.client, ['tenant:read'])).token)
    const otherPat = other.client.withBearer((await patFor(other.client, ['tenant:read'])).token)
    const presigned = await s3.presignedGetObject(storage.general, 'obj/1', 3600)
    expect((await fetch(presigned)).status).toBe(200)
    const invitee = uniqueEmail('late')
    expect((await owner.client.post('/tenant-invitations', { email: invitee, role: 'viewer' })).status).toBe(201)
    const mail = await waitForMail(invitee.toLowerCase(), { subject: /invited/ })
    const invitation = decodeURIComponent(/[?&]token=([^\s&]+)/.exec(mail.text)![1]!)
    // Before: the header naming a live tenant that is not the caller's is a mismatch, as the published rule says.
    const named = { 'x-tenant-id': owner.tenantId }
    expect((await other.client.get('/tenants/current/offboarding', named)).json.code).toBe('TENANT_CONTEXT_MISMATCH')
    const otherBefore = await leftovers(env.api.sql, other.tenantId)
    await offboarded(env.api.sql, owner.tenantId)

    // Provisioning's workflow may still show as running in Temporal's visibility for a moment.
    const started = await eventually('the job to start', async () => {
      const res = await owner.client.post('/tenants/current/deletion-jobs', {})
      if (res.status === 409 && res.json.code === 'DELETION_BLOCKED_BY_ACTIVE_WORK') return undefined
      return res
    })
    expect(started.status).toBe(201)
    const job = started.json.data
    expect(job).toMatchObject({ status: 'queued', trigger: 'request', workflowId: tenantDeletionWorkflowId(owner.tenantId) })
    const view = await owner.client.get(`/tenants/current/deletion-jobs/${job.id}`)
    expect([200, 401]).toContain(view.status) // the session may already be revoked by the job

    const done = await jobEnds(env.api.sql, job.id)
    expect({ status: done.status, error: done.error }).toEqual({ status: 'succeeded', error: null })

    // The receipt: signed by the deployment's key, every table and bucket counted and verified empty.
    const stored = done.receipt as { envelope: Parameters<typeof verifyReceipt>[1]; sha256: string; receipt: DeletionReceipt }
    const receipt = verifyReceipt(env.config, stored.envelope)!
    expect(receipt).toEqual(stored.receipt)
    expect(verifyReceipt(env.config, { ...stored.envelope, payload: Buffer.from(JSON.stringify({ ...receipt, tables: [] })).toString('base64') })).toBeNull()
    expect(receipt.tables.map((t) => t.table)).toEqual([...TABLE_STEPS])
    expect(receipt.tables.every((t) => t.remaining === 0)).toBe(true)
    const rows = Object.fromEntries(receipt.tables.map((t) => [t.table, t.rowsDeleted]))
    expect(rows).toMatchObject({ memberships: 1, tenant_invitations: 2, projects: 1, webhook_endpoints: 1, storage_buckets: 3 })
    expect(rows.api_keys).toBe(2)
    expect(receipt.buckets).toEqual([
      { kind: 'general', bucket: storage.general, objectsDeleted: storage.objectVersions.general, exists: false },
      { kind: 'dataset', bucket: storage.dataset, objectsDeleted: storage.objectVersions.dataset, exists: false },
      { kind: 'export', bucket: storage.exportBucket, objectsDeleted: 0, exists: false },
    ])
    expect(receipt.credentials).toMatchObject({ apiKeysRevoked: 2, webhookEndpointsDisabled: 1 })
    expect(receipt.credentials.sessionsRevoked).toBeGreaterThanOrEqual(1)
    const expires = new Date(receipt.backups.lastBackupExpiresAt).getTime() - new Date(receipt.completedAt).getTime()
    expect(expires).toBe(env.config.BACKUP_RETENTION_DAYS * DAY)

    // Nothing of the tenant remains: rows, the tenant itself, the buckets.
    expect(await leftovers(env.api.sql, owner.tenantId)).toEqual({})
    expect(await env.api.sql`select 1 from tenants where id = ${owner.tenantId}`).toHaveLength(0)
    for (const b of [storage.general, storage.dataset, storage.exportBucket]) expect(await s3.bucketExists(b)).toBe(false)

    // The audit trail keeps the receipt and still verifies.
    await sealAudit(env.api.sql)
    const [entry] = await env.api.sql<{ details: { receiptSha256: string } }[]>`
      select details from audit_log where tenant_id = ${owner.tenantId} and action = 'tenant.deleted'`
    expect(entry!.details.receiptSha256).toBe(stored.sha256)
    const check = await verifyChain(env.api.sql, owner.tenantId, new Date(Date.now() - DAY), new Date(Date.now() + DAY))
    expect(check.first_broken_seq).toBeNull()
    expect(check.verified).toBeGreaterThan(5)
    // They outlive the tenant without their personal part (labels, addresses, user agents): the owner's address is in
    // none of them, and the chain above verified with the parts blanked (migrations/0091).
    const [mentions] = await env.api.sql<{ n: number; blanked: number }[]>`
      select count(*) filter (where position(lower(${owner.email}) in lower(a::text)) > 0)::int as n,
             count(*) filter (where a.personal_digest is not null and a.personal_nonce is null)::int as blanked
        from audit_log a where a.tenant_id = ${owner.tenantId}`
    expect(mentions!.n).toBe(0)
    expect(mentions!.blanked).toBeGreaterThan(5)

    // The final event reached the endpoint, signed with its secret, and was the last thing it received.
    const finals = receiver.of('tenant.deleted')
    expect(finals.length).toBeGreaterThanOrEqual(1)
    expect(finals[0]!.verifiedBy).toEqual([0])
    expect(finals[0]!.body.data).toEqual({ tenantId: owner.tenantId, deletionJobId: job.id })
    expect(receiver.deliveries.at(-1)!.body.type).toBe('tenant.deleted')

    // The attacker's view: the deleted tenant's PAT, session, webhook secret and presigned URL are dead. The PAT's row
    // is gone and its digest retired (TOKEN_NOT_FOUND); the session is the person's, revoked, not destroyed.
    expect([(await pat.get('/tokens/self')).json.code, (await owner.client.get('/tokens/self')).json.code]).toEqual(['TOKEN_NOT_FOUND', 'TOKEN_REVOKED'])
    expect(await env.api.sql`select 1 from webhook_endpoints where id = ${endpoint.id}`).toHaveLength(0)
    expect((await fetch(presigned)).status).toBe(404)
    const [retired] = await env.api.sql`select reason from retired_credentials where digest = ${sha256(pat.bearer!)}`
    expect(retired).toEqual({ reason: 'tenant_deleted' })

    // The tombstone: the id, when, and the job and receipt that prove it; nothing else.
    const tombstones = await env.api.sql`select * from tenant_tombstones where tenant_id = ${owner.tenantId}`
    expect([...tombstones]).toEqual([{ tenant_id: owner.tenantId, deleted_at: expect.any(Date), deletion_job_id: job.id, receipt_sha256: stored.sha256 }])
    // Where a request names the id: the tenant header on an operation that declares TENANT_NOT_FOUND (T404) answers it;
    // one whose published sets lack it keeps the mismatch; an id that never was a tenant stays a mismatch.
    const notFound = await other.client.get('/tenants/current/offboarding', named)
    expect([notFound.status, notFound.json.code]).toEqual([404, 'TENANT_NOT_FOUND'])
    expect((await other.client.get('/tenants/current/auth-policy', named)).json.code).toBe('TENANT_CONTEXT_MISMATCH')
    expect((await other.client.get('/tenants/current/offboarding', { 'x-tenant-id': crypto.randomUUID() })).json.code).toBe('TENANT_CONTEXT_MISMATCH')
    // The owner signs in again (the account outlives the tenant) with no tenant: the header is TENANT_NOT_FOUND, no
    // header TENANT_REQUIRED; a switch to the old membership is MEMBERSHIP_NOT_FOUND and the old invitation
    // INVITATION_INVALID (their published sets have no 404; docs/api.md "After a tenant deletion").
    const again = new Client(env.api.url)
    expect((await again.post('/sessions', { email: owner.email, password: PASSWORD })).status).toBe(201)
    expect((await again.get('/tenants/current/offboarding', named)).json.code).toBe('TENANT_NOT_FOUND')
    expect((await again.get('/tenants/current/offboarding')).json.code).toBe('TENANT_REQUIRED')
    const switched = await again.post('/sessions/current-membership-switches', { membershipId: owner.membershipId })
    expect([switched.status, switched.json.code]).toEqual([403, 'MEMBERSHIP_NOT_FOUND'])
    const accepted = await new Client(env.api.url).post('/tenant-invitations/acceptance-records', { token: invitation, password: PASSWORD })
    expect([accepted.status, accepted.json.code]).toEqual([400, 'INVITATION_INVALID'])

    // Another tenant keeps everything.
    // Its own requests meanwhile may add rows (the API's usage tally flushes API request counts every minute), so
    // "keeps" is: no table of it has fewer rows than before.
    const otherAfter = await leftovers(env.api.sql, other.tenantId)
    const lost = Object.entries(otherBefore).filter(([table, n]) => (otherAfter[table] ?? 0) < n)
    expect({ lost }).toEqual({ lost: [] })
    expect((await otherPat.get('/tokens/self')).status).toBe(200)
    await receiver.stop()
  }, 300_000)
})
