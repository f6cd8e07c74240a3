// The audit trail of a tenant's resources: storage, webhook endpoints and their deliveries, embodiment profiles,
// training jobs, model versions and edge packages. Each change is recorded by whoever made it (a user, a token, or
// the workflow that did it), nothing secret is ever in an entry, another tenant sees none of it, and the trail
// reaches a SIEM as signed `audit.entry` webhooks.
import { describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import type { TestApi } from '../support/api'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { bucketsIn } from '../storage/helpers'
import { modelTenant, modelWriter, settled as versionSettled, uploadThroughUrls } from '../models/support'
import { FEATURES } from '../edge-packages/helpers'
import { publish, Receiver, settled, trainingDone, useDeliveryEnv, webhookTenant } from '../webhooks/delivery-helpers'
import { storageWorkflowIds } from '../../workflows/contract-storage'
import { webhookWorkflowIds } from '../../workflows/contract-webhooks'
import { auditWindow, hourAgo, sealAudit } from '../support/audit'

// Two quick attempts: a failing receiver's message fails within a second.
const env = useDeliveryEnv({ WEBHOOK_RETRY_SCHEDULE: '0,100ms', WORKER_TASK_QUEUES: '' })

interface Entry {
  id: string
  seq: number
  tenantId: string
  action: string
  outcome: string
  actor: { type: string; id: string | null }
  target: { type: string; id: string | null } | null
  ip: string | null
  userAgent: string | null
  changes: Record<string, { before: unknown; after: unknown }> | null
  details: Record<string, unknown> | null
}

/** The caller's tenant trail (filtered by `q`), oldest first. */
async function trail(client: Client, q = ''): Promise<Entry[]> {
  const res = await client.get(`/tenants/current/audit-log?${auditWindow()}&pageSize=100${q}`)
  expect(res.status).toBe(200)
  return (res.json.data as Entry[]).toReversed()
}
const actions = (entries: Entry[]) => entries.map((e) => e.action)

/** Every audit row of the tenant and every audit.entry event in its outbox, as one string to search. */
async function everythingRecorded(api: TestApi, tenantId: string) {
  await sealAudit(api.sql)
  const rows = await api.sql`select to_jsonb(a) as row from audit_log a where tenant_id = ${tenantId}`
  const events = await api.sql`select data from events where tenant_id = ${tenantId} and type = 'audit.entry'`
  return JSON.stringify([...rows, ...events])
}

describe('webhook endpoints', () => {
  test('created, updated (before and after), secret rotated, test sent, deleted: and neither signing secret is in any entry', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    const created = await t.manager.post(
      '/webhook-endpoints',
      { url: r.url(), events: ['training_job.completed'], description: 'siem' },
      { 'user-agent': 'audit-resources/1' },
    )
    expect(created.status).toBe(201)
    const id = created.json.data.endpoint.id as string
    const patched = await t.manager.patch(`/webhook-endpoints/${id}`, {
      url: r.url('/v2'),
      events: ['training_job.completed', 'training_job.failed'],
      description: 'siem v2',
      rateLimitPerSecond: 5,
    })
    expect(patched.status).toBe(200)
    expect((await t.manager.patch(`/webhook-endpoints/${id}`, { description: 'siem v2' })).status).toBe(200) // changes nothing: not recorded
    const rotated = await t.manager.post(`/webhook-endpoints/${id}/secret-rotations`)
    expect(rotated.status).toBe(201)
    const sent = await t.manager.post(`/webhook-endpoints/${id}/test-events`)
    expect(sent.status).toBe(202)
    expect((await t.manager.delete(`/webhook-endpoints/${id}`)).status).toBe(200)

    const entries = await trail(t.client, `&targetId=${id}`)
    expect(actions(entries)).toEqual([
      'webhook_endpoint.created',
      'webhook_endpoint.updated',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.test_sent',
      'webhook_endpoint.deleted',
    ])
    const [made, updated, rotation, test, deleted] = entries
    expect(made).toMatchObject({
      tenantId: t.tenantId,
      outcome: 'success',
      actor: { type: 'api_key', id: t.userId },
      target: { type: 'webhook_endpoint', id },
      ip: '127.0.0.1',
      userAgent: 'audit-resources/1',
      details: { url: r.url(), events: ['training_job.completed'], description: 'siem', rateLimitPerSecond: null, enabled: true },
    })
    expect(updated!.changes).toEqual({
      url: { before: r.url(), after: r.url('/v2') },
      events: { before: ['training_job.completed'], after: ['training_job.completed', 'training_job.failed'] },
      description: { before: 'siem', after: 'siem v2' },
      rateLimitPerSecond: { before: null, after: 5 },
    })
    expect(rotation!.details).toEqual({ previousSecretExpiresAt: rotated.json.data.previousSecretExpiresAt })
    expect(test!.details).toEqual({ messageId: sent.json.data.id })
    expect(deleted!.details).toEqual({ url: r.url('/v2') })

    const recorded = await everythingRecorded(env.api, t.tenantId)
    for (const secret of [created.json.data.secret, rotated.json.data.secret]) {
      expect(secret).toStartWith('whsec_')
      expect(recorded).not.toContain(secret)
      expect(recorded).not.toContain(secret.slice('whsec_'.length))
    }
    expect(recorded).not.toContain('whsec_')
    await r.stop()
  }, 60_000)

  test("a redelivery and a recovery are the user's; disabling a gone endpoint is its delivery workflow's", async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    r.answer = () => ({ status: 500 })
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'] })
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
    const [failed] = await settled(env.api, ep.id, 1)
    expect(failed!.status).toBe('failed')

    r.answer = () => ({ status: 204 })
    expect((await t.manager.post(`/webhook-endpoints/${ep.id}/messages/${failed!.id}/redeliveries`)).status).toBe(202)
    await eventually('the redelivery to succeed', async () => ((await settled(env.api, ep.id, 1))[0]!.status === 'succeeded' ? true : undefined))
    const since = hourAgo()
    const recovery = await t.manager.post(`/webhook-endpoints/${ep.id}/recoveries`, { since })
    expect([recovery.status, recovery.json.data]).toEqual([202, { redelivered: 0 }])

    r.answer = () => ({ status: 410 })
    const [goneEvent] = await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
    await settled(env.api, ep.id, 2)

    const [redelivered] = await trail(t.client, `&targetId=${failed!.id}`)
    expect(redelivered).toMatchObject({
      action: 'webhook_message.redelivered',
      actor: { type: 'api_key', id: t.userId },
      target: { type: 'webhook_message', id: failed!.id },
      details: { endpointId: ep.id, eventType: 'training_job.completed' },
    })
    const entries = await trail(t.client, `&targetId=${ep.id}`)
    expect(actions(entries)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.recovery_started', 'webhook_endpoint.disabled'])
    expect(entries[1]).toMatchObject({ actor: { type: 'api_key', id: t.userId }, details: { since: new Date(since).toISOString(), redelivered: 0 } })
    const deliveryWorkflow = webhookWorkflowIds.delivery({ endpointId: ep.id, eventType: 'training_job.completed', eventId: goneEvent! })
    expect(entries[2]).toMatchObject({
      actor: { type: 'system', id: deliveryWorkflow },
      ip: null,
      userAgent: null,
      details: { reason: 'gone', url: r.url() },
    })
    await r.stop()
  }, 60_000)
})

describe('embodiment profiles', () => {
  test('created, updated with before and after, deleted; an update the database refuses leaves no entry', async () => {
    const t = await modelWriter(env.api.url)
    const create = async (name: string) => {
      const res = await t.pat.post('/embodiment-profiles', { name, robotType: 'so100', controlRateHz: 30, ...FEATURES })
      expect(res.status).toBe(201)
      return res.json.data.id as string
    }
    const [a, b] = [await create('arm-a'), await create('arm-b')]
    expect((await t.pat.patch(`/embodiment-profiles/${a}`, { robotType: 'so101', controlRateHz: 50, name: 'arm-a' })).status).toBe(200)
    const taken = await t.pat.patch(`/embodiment-profiles/${a}`, { name: 'arm-b', controlRateHz: 60 })
    expect([taken.status, taken.json.code]).toEqual([409, 'EMBODIMENT_PROFILE_NAME_CONFLICT'])
    expect((await t.pat.delete(`/embodiment-profiles/${b}`)).status).toBe(204)

    const ofA = await trail(t.client, `&targetId=${a}`)
    expect(actions(ofA)).toEqual(['embodiment_profile.created', 'embodiment_profile.updated'])
    expect(ofA[0]).toMatchObject({ actor: { type: 'api_key', id: t.userId }, details: { name: 'arm-a', robotType: 'so100' } })
    expect(ofA[1]!.changes).toEqual({ robotType: { before: 'so100', after: 'so101' }, controlRateHz: { before: 30, after: 50 } })
    const ofB = await trail(t.client, `&targetId=${b}`)
    expect(actions(ofB)).toEqual(['embodiment_profile.created', 'embodiment_profile.deleted'])
    expect(ofB[1]).toMatchObject({ target: { type: 'embodiment_profile', id: b }, details: { name: 'arm-b' } })
  })
})

describe('storage', () => {
  test('provisioning is requested by the user and completed by its workflow; a repeat that changes nothing is not recorded', async () => {
    const owner = await tenantOwner(env.api.url)
    const put = () => owner.client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local' } })
    expect((await put()).status).toBe(200)
    await bucketsIn(owner.client, 'ready')
    expect((await put()).status).toBe(200)

    const [requested, provisioned, ...more] = await trail(owner.client, '&action=storage.')
    expect(more).toEqual([])
    expect(requested).toMatchObject({
      action: 'storage.provisioning_requested',
      actor: { type: 'user', id: owner.userId },
      ip: '127.0.0.1',
      target: { type: 'storage', id: owner.tenantId },
      details: { regionId: 'local', kinds: ['general', 'dataset', 'export'] },
    })
    expect(provisioned).toMatchObject({
      action: 'storage.provisioned',
      actor: { type: 'system', id: storageWorkflowIds.provision(owner.tenantId) },
      ip: null,
      details: { regionId: 'local' },
    })
    expect(provisioned!.seq).toBeGreaterThan(requested!.seq)

    const billing = owner.client.withBearer((await patFor(owner.client, ['billing:read', 'billing:write'])).token)
    const job = await billing.post('/tenants/current/storage-reconciliation-jobs', { dryRun: true })
    expect(job.status).toBe(201)
    const [started] = await trail(owner.client, '&action=storage.reconciliation_started')
    expect(started).toMatchObject({
      actor: { type: 'api_key', id: owner.userId },
      target: { type: 'reconciliation_job', id: job.json.data.job.id },
      details: { dryRun: true },
    })
  }, 60_000)
})

describe('models and packages', () => {
  test('a training job, a model version (its upload URLs never recorded) and a package are recorded; a replayed package request is not', async () => {
    const t = await modelTenant(env.api.url)
    const job = (await t.pat.post('/training-jobs', { name: 'pi0 finetune' })).json.data
    expect((await t.pat.post(`/training-jobs/${job.id}/completion`, { status: 'completed', outputArtifactPath: 'runs/pi0/model.onnx' })).status).toBe(200)

    const weights = Buffer.from('onnx weights')
    const created = await t.pat.post('/model-versions', {
      name: 'pick v1',
      format: 'onnx',
      source: { kind: 'imported_checkpoint', path: 'models/pick/v1.onnx' },
    })
    expect(created.status).toBe(201)
    const version = created.json.data
    const urls = await uploadThroughUrls(t.pat, version.id, { 'models/pick/v1.onnx': weights })
    expect((await t.pat.post(`/model-versions/${version.id}/validations`)).status).toBe(202)
    expect((await versionSettled(t.pat, version.id)).status).toBe('ready')

    const profile = (await t.pat.post('/embodiment-profiles', { name: 'arm', robotType: 'so100', controlRateHz: 30, ...FEATURES })).json.data
    const order = (key: string) =>
      t.pat.post(
        `/model-versions/${version.id}/edge-inference-package`,
        { embodimentProfileId: profile.id, mode: 'local', useFakeTransport: true },
        { 'idempotency-key': key },
      )
    const key = randomUUID()
    const [first, replay] = [await order(key), await order(key)]
    expect([first.status, replay.status, replay.json.data.id]).toEqual([201, 201, first.json.data.id])
    const pkg = first.json.data.id as string
    const run = {
      stepsDone: 12,
      latencyMs: null,
      contractViolations: 0,
      exitReason: 'interrupted',
      violations: [],
      startedAt: '2026-01-01T00:00:00Z',
      finishedAt: '2026-01-01T00:00:01Z',
    }
    const reported = await t.pat.post(`/edge-inference-packages/${pkg}/runs`, run)
    expect(reported.status).toBe(201)
    // The profile is in use: the refused delete records nothing.
    expect((await t.pat.delete(`/embodiment-profiles/${profile.id}`)).json.code).toBe('EMBODIMENT_PROFILE_IN_USE')

    const ofJob = await trail(t.client, `&targetId=${job.id}`)
    expect(actions(ofJob)).toEqual(['training_job.created', 'training_job.completed'])
    expect(ofJob[1]!.details).toEqual({ status: 'completed', outputArtifactPath: 'runs/pi0/model.onnx' })

    const ofVersion = await trail(t.client, `&targetId=${version.id}`)
    expect(actions(ofVersion)).toEqual(['model_version.created', 'model_version.upload_urls_issued', 'model_version.validation_started'])
    expect(ofVersion[0]).toMatchObject({
      actor: { type: 'api_key', id: t.userId },
      details: { name: 'pick v1', format: 'onnx', sourceKind: 'imported_checkpoint' },
    })
    expect(ofVersion[1]!.details).toEqual({ objectCount: 1, expiresAt: urls.expiresAt })
    const recorded = await everythingRecorded(env.api, t.tenantId)
    expect(recorded).not.toContain(urls.uploads[0].url)
    expect(recorded).not.toContain(new URL(urls.uploads[0].url).searchParams.get('X-Amz-Signature'))

    const ofPackage = await trail(t.client, `&targetId=${pkg}`)
    expect(actions(ofPackage)).toEqual(['edge_package.created', 'edge_package.run_reported'])
    expect(ofPackage[0]).toMatchObject({
      actor: { type: 'api_key', id: t.userId },
      target: { type: 'edge_package', id: pkg },
      details: { modelVersionId: version.id, embodimentProfileId: profile.id, mode: 'local', targetArch: 'cpu' },
    })
    expect(ofPackage[1]!.details).toEqual({ runId: reported.json.data.id, stepsDone: 12, exitReason: 'interrupted' })
    expect(actions(await trail(t.client, `&targetId=${profile.id}`))).toEqual(['embodiment_profile.created'])

    // Another tenant's administrator sees none of it.
    const other = await tenantOwner(env.api.url)
    for (const id of [job.id, version.id, pkg, profile.id]) expect(await trail(other.client, `&targetId=${id}`)).toEqual([])
    const theirs = await trail(other.client)
    expect(theirs.every((e) => e.tenantId === other.tenantId)).toBe(true)
    expect(JSON.stringify(theirs)).not.toContain(t.tenantId)
  }, 90_000)
})

describe('a SIEM', () => {
  test('an endpoint subscribed to audit.entry receives each entry as the API shows it, signed', async () => {
    const t = await webhookTenant(env.api)
    const siem = await new Receiver(env.certs).start()
    const ep = await t.register({ url: siem.url(), events: ['audit.entry'] })
    siem.secrets = [ep.secret]
    const writer = t.client.withBearer((await patFor(t.client, ['model:write'])).token)
    const job = (await writer.post('/training-jobs', { name: 'for the siem' })).json.data

    const delivery = await eventually('the training_job.created entry at the SIEM', async () =>
      siem.of('audit.entry').find((d) => (d.body.data as { target?: { id?: string } }).target?.id === job.id),
    )
    expect(delivery.verifiedBy).toEqual([0])
    expect(delivery.body.tenantId).toBe(t.tenantId)
    const [entry] = await trail(t.client, `&targetId=${job.id}`)
    expect(delivery.body.data).toEqual(entry as unknown as Record<string, unknown>)
    expect(entry).toMatchObject({ action: 'training_job.created', details: { name: 'for the siem' } })
    // The endpoint's own registration reaches it too, without its secret.
    const registered = await eventually("the endpoint's own creation at the SIEM", async () =>
      siem.of('audit.entry').find((d) => d.body.data.action === 'webhook_endpoint.created'),
    )
    expect(JSON.stringify(registered.body)).not.toContain(ep.secret)
    await siem.stop()
  }, 60_000)
})
