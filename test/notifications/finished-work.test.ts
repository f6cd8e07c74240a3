// Work a user started that finishes later, on the runner's worker: the finish tells the user who asked for it, in the
// finish's own transaction, once (a retried activity adds nothing), and tells no one else.
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Client } from '../support/client'
import { eventually } from '../support/temporal'
import { hourAgo, inAnHour } from '../support/audit'
import { signedUpUser } from '../support/fixtures'
import { useApiAndTemporal } from '../storage/helpers'
import { makeProfile, makeVersion, modelTenant, packageIn } from '../edge-packages/helpers'
import { settled, sha256, uploadThroughUrls } from '../models/support'

setDefaultTimeout(90_000)
const env = useApiAndTemporal()

const inboxOf = async (client: Client) =>
  (await client.get('/users/me/notifications')).json.data as { kind: string; tenantId: string; fields: Record<string, unknown> }[]

describe('finished work notifies whoever started it', () => {
  test('a package build, a model validation and an audit export', async () => {
    const t = await modelTenant(env.api.url)
    const bystander = await signedUpUser(env.api.url)

    // A package built from a ready version, requested with the owner's token.
    const profileId = await makeProfile(env.api.sql, t.tenantId)
    const version = await makeVersion(env.api.sql, t.tenantId, t.general, { 'policy.onnx': Buffer.from('bytes') })
    const requested = await t.models.post(`/model-versions/${version.id}/edge-inference-package`, {
      mode: 'remote_ws',
      remotePolicyHost: 'policy.internal',
      remotePolicyPort: 8000,
      steps: 5,
      useFakeTransport: true,
      embodimentProfileId: profileId,
    })
    expect(requested.status).toBe(201)
    const pkg = await packageIn(t.models, requested.json.data.id, ['ready', 'failed'])

    // A validation, started with the same token.
    const bytes = Buffer.from('onnx bytes')
    const created = await t.pat.post('/model-versions', {
      name: 'notify v1',
      format: 'onnx',
      source: { kind: 'imported_checkpoint', path: 'models/n/v1.onnx', sizeBytes: bytes.length, sha256: sha256(bytes) },
    })
    expect(created.status).toBe(201)
    await uploadThroughUrls(t.pat, created.json.data.id, { 'models/n/v1.onnx': bytes })
    expect((await t.pat.post(`/model-versions/${created.json.data.id}/validations`)).status).toBe(202)
    const validated = await settled(t.pat, created.json.data.id)

    const exported = await t.client.post('/tenants/current/audit-log/exports', { from: hourAgo(), to: inAnHour() })
    expect(exported.status).toBe(201)
    const job = await eventually(
      'the export to finish',
      async () => {
        const res = await t.client.get(`/tenants/current/audit-log/exports/${exported.json.data.id}`)
        return ['succeeded', 'failed'].includes(res.json?.data?.status) ? res.json.data : undefined
      },
      60_000,
    )
    expect(job.status).toBe('succeeded')

    const got = await inboxOf(t.client)
    const byKind = Object.fromEntries(got.map((n) => [n.kind, n]))
    expect(byKind['edge_package.build_finished']).toMatchObject({
      tenantId: t.tenantId,
      fields: { packageId: pkg.id, modelVersionId: version.id, targetArch: requested.json.data.targetArch, status: pkg.status },
    })
    expect(byKind['model_version.validation_finished']).toMatchObject({
      tenantId: t.tenantId,
      fields: { modelVersionId: created.json.data.id, name: 'notify v1', status: validated.status },
    })
    expect(byKind['audit_export.ready']).toMatchObject({ tenantId: t.tenantId, fields: { exportId: job.id, entries: job.entriesWritten } })
    expect(got.filter((n) => n.kind !== 'account.new_sign_in')).toHaveLength(3)
    // Each told once: the watches are gone with their notices.
    expect(await env.api.sql`select 1 from notification_watches where tenant_id = ${t.tenantId}`).toHaveLength(0)
    expect(await inboxOf(bystander.client)).toEqual([])
  })
})
