// The published operation's request: every field and bound, every code it returns, idempotent replay against a
// second package, tenant isolation of every package route, and a build that fails for good.
import { describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { localS3, useApiAndTemporal } from '../storage/helpers'
import { patFor } from '../support/fixtures'
import { deleteTenantRow } from '../support/tenant-row'
import { makeProfile, makeVersion, modelTenant, packageIn } from './helpers'

const env = useApiAndTemporal()
const LOCAL = { mode: 'local', useFakeTransport: true }

async function setup() {
  const t = await modelTenant(env.api.url)
  const profileId = await makeProfile(env.api.sql, t.tenantId)
  const version = await makeVersion(env.api.sql, t.tenantId, t.general, { 'policy.onnx': Buffer.from('weights') })
  const create = (body: Record<string, unknown>, headers?: Record<string, string>, versionId = version.id) =>
    t.models.post(`/model-versions/${versionId}/edge-inference-package`, { embodimentProfileId: profileId, ...body }, headers)
  return { t, profileId, version, create }
}

const invalid = (res: { status: number; json: any }, path: string) => {
  expect(res.status).toBe(400)
  expect(res.json.code).toBe('VALIDATION_ERROR')
  expect(JSON.stringify(res.json.errors)).toContain(path)
}

describe('the request', () => {
  test('every field and bound', async () => {
    const { t, create, version } = await setup()
    invalid(await t.models.post(`/model-versions/${version.id}/edge-inference-package`, { mode: 'local' }), 'embodimentProfileId')
    invalid(await create({ ...LOCAL, embodimentProfileId: 'not-a-uuid' }), 'embodimentProfileId')
    invalid(await create({}), 'mode')
    invalid(await create({ mode: 'cloud' }), 'mode')
    invalid(await create({ mode: 'remote_ws', remotePolicyPort: 8000 }), 'remotePolicyHost')
    invalid(await create({ mode: 'remote_ws', remotePolicyHost: 'gpu.lan' }), 'remotePolicyPort')
    invalid(await create({ mode: 'remote_ws', remotePolicyHost: 'gpu.lan', remotePolicyPort: 0 }), 'remotePolicyPort')
    invalid(await create({ mode: 'remote_ws', remotePolicyHost: 'gpu.lan', remotePolicyPort: 65536 }), 'remotePolicyPort')
    invalid(await create({ mode: 'remote_ws', remotePolicyHost: 'gpu.lan; rm -rf /', remotePolicyPort: 80 }), 'remotePolicyHost')
    invalid(await create({ ...LOCAL, steps: 0 }), 'steps')
    invalid(await create({ ...LOCAL, steps: 100_001 }), 'steps')
    invalid(await create({ ...LOCAL, steps: 1.5 }), 'steps')
    invalid(await create({ ...LOCAL, targetArch: 'linux/arm64' }), 'targetArch')
    invalid(await create({ ...LOCAL, wireProtocols: [] }), 'wireProtocols')
    invalid(await create({ ...LOCAL, wireProtocols: ['grpc'] }), 'wireProtocols')
    invalid(await create({ ...LOCAL, wireProtocols: ['lerobot-grpc'] }), 'wireProtocols') // the cpu line has no LeRobot
    invalid(await create({ ...LOCAL, useFakeTransport: 'yes' }), 'useFakeTransport')
    invalid(await create({ ...LOCAL, surprise: 1 }), 'surprise')

    const defaults = await create({ mode: 'local' })
    expect(defaults.status).toBe(201)
    expect(defaults.json.data).toMatchObject({
      status: 'queued',
      mode: 'local',
      steps: 1000,
      targetArch: 'cpu',
      wireProtocols: [{ name: 'openpi-ws', port: 8000 }],
      useFakeTransport: false,
      remotePolicyHost: null,
      remotePolicyPort: null,
      strategyKey: null,
      artifact: null,
      failureReason: null,
      imageLine: { baseImage: 'python:3.11-slim-bookworm', platform: 'linux/amd64', hasLeRobot: false },
    })
    const edges = await create({ mode: 'remote_ws', remotePolicyHost: '10.0.0.7', remotePolicyPort: 65535, steps: 100_000, strategyKey: 'chunked/v2' })
    expect(edges.status).toBe(201)
    expect(edges.json.data).toMatchObject({ remotePolicyHost: '10.0.0.7', remotePolicyPort: 65535, steps: 100_000, strategyKey: 'chunked/v2' })
    const low = await create({ mode: 'remote_ws', remotePolicyHost: 'gpu.lan', remotePolicyPort: 1, steps: 1 })
    expect(low.status).toBe(201)
    const jetson = await create({ mode: 'local', targetArch: 'jetson-jp6', wireProtocols: ['openpi-ws', 'lerobot-grpc'] })
    expect(jetson.status).toBe(201)
    expect(jetson.json.data).toMatchObject({
      targetArch: 'jetson-jp6',
      imageLine: { baseImage: 'nvcr.io/nvidia/l4t-jetpack:r36.4.0', platform: 'linux/arm64', hasLeRobot: true },
      wireProtocols: [
        { name: 'openpi-ws', port: 8000 },
        { name: 'lerobot-grpc', port: 8080 },
      ],
    })
    expect(
      (await create({ mode: 'remote_ws', remotePolicyHost: 'gpu.lan', remotePolicyPort: 8080, targetArch: 'x86-cuda', wireProtocols: ['lerobot-grpc'] }))
        .status,
    ).toBe(201)
    // The version is onnx: in local mode the package serves it over openpi-ws, so the list must carry it.
    invalid(await create({ mode: 'local', targetArch: 'x86-cuda', wireProtocols: ['lerobot-grpc'] }), 'wireProtocols')
  }, 60_000)

  test('the M404 and M400 codes it returns', async () => {
    const { t, create } = await setup()
    const missing = await create(LOCAL, undefined, randomUUID())
    expect([missing.status, missing.json.code]).toEqual([404, 'MODEL_VERSION_NOT_FOUND'])
    const malformed = await create(LOCAL, undefined, 'v1')
    expect([malformed.status, malformed.json.code]).toEqual([404, 'MODEL_VERSION_NOT_FOUND'])
    const unknownProfile = await create({ ...LOCAL, embodimentProfileId: randomUUID() })
    expect([unknownProfile.status, unknownProfile.json.code]).toEqual([404, 'NOT_FOUND'])
    for (const status of ['draft', 'validating', 'failed']) {
      const v = await makeVersion(env.api.sql, t.tenantId, t.general, { 'm.onnx': Buffer.from(status) }, status)
      const res = await create(LOCAL, undefined, v.id)
      expect([res.status, res.json.code]).toEqual([400, 'MODEL_VERSION_INVALID_STATUS'])
    }
    expect((await t.client.withBearer('rcp_pat_nope').post(`/model-versions/${randomUUID()}/edge-inference-package`, LOCAL)).status).toBe(401)
    const reader = t.client.withBearer((await patFor(t.client, ['model:read'])).token)
    const denied = await reader.post(`/model-versions/${randomUUID()}/edge-inference-package`, { ...LOCAL, embodimentProfileId: randomUUID() })
    expect([denied.status, denied.json.code]).toEqual([403, 'PERMISSION_NOT_DECLARED'])
  }, 60_000)

  test('objects gone or resized since validation: the source codes of assertSourceStillPresent', async () => {
    const { t, create } = await setup()
    const s3 = localS3()
    const checkpoint = await makeVersion(env.api.sql, t.tenantId, t.general, { 'model.onnx': Buffer.from('weights') }, 'ready', 'imported_checkpoint')
    await s3.removeObject(t.general, checkpoint.objects[0]!.key)
    const gone = await create(LOCAL, undefined, checkpoint.id)
    expect([gone.status, gone.json.code]).toEqual([404, 'IMPORTED_CHECKPOINT_NOT_FOUND'])
    const bundle = await makeVersion(env.api.sql, t.tenantId, t.general, { 'a.onnx': Buffer.from('a'), 'b.json': Buffer.from('{}') })
    await s3.removeObject(t.general, bundle.objects[1]!.key)
    const partial = await create(LOCAL, undefined, bundle.id)
    expect([partial.status, partial.json.code]).toEqual([400, 'IMPORTED_CHECKPOINT_INCOMPLETE'])
    const resized = await makeVersion(env.api.sql, t.tenantId, t.general, { 'model.onnx': Buffer.from('weights') }, 'ready', 'imported_checkpoint')
    await s3.putObject(t.general, resized.objects[0]!.key, Buffer.from('longer weights'))
    const other = await create(LOCAL, undefined, resized.id)
    expect([other.status, other.json.code]).toEqual([400, 'IMPORTED_CHECKPOINT_INCOMPLETE'])
    expect((await t.models.get('/edge-inference-packages')).json.data).toEqual([])
  }, 60_000)

  test('a profile a package uses cannot be deleted (409 EMBODIMENT_PROFILE_IN_USE); an unused one can', async () => {
    const { t, create, profileId } = await setup()
    expect((await create(LOCAL)).status).toBe(201)
    const refused = await t.models.delete(`/embodiment-profiles/${profileId}`)
    expect([refused.status, refused.json.code]).toEqual([409, 'EMBODIMENT_PROFILE_IN_USE'])
    expect((await t.models.get(`/embodiment-profiles/${profileId}`)).status).toBe(200)
    const unused = await makeProfile(env.api.sql, t.tenantId)
    expect((await t.models.delete(`/embodiment-profiles/${unused}`)).status).toBe(204)
  }, 60_000)

  test('deleting a tenant takes its packages, versions and profiles with it: the in-use rule (RESTRICT) never blocks the cascade', async () => {
    const { t, create, profileId, version } = await setup()
    expect((await create(LOCAL)).status).toBe(201)
    await deleteTenantRow(env.api.deps.config.DATABASE_URL, t.tenantId)
    const [left] = await env.api.sql<{ n: number }[]>`
      select (select count(*) from edge_packages where tenant_id = ${t.tenantId})
           + (select count(*) from model_versions where id = ${version.id})
           + (select count(*) from embodiment_profiles where id = ${profileId}) as n`
    expect(Number(left!.n)).toBe(0)
  }, 60_000)

  test('an Idempotency-Key replays the same package; without one a second request is a second package', async () => {
    const { create } = await setup()
    const key = randomUUID()
    const first = await create(LOCAL, { 'idempotency-key': key })
    const again = await create(LOCAL, { 'idempotency-key': key })
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json.data.id).toBe(first.json.data.id)
    const conflict = await create({ ...LOCAL, steps: 7 }, { 'idempotency-key': key })
    expect([conflict.status, conflict.json.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT'])
    const [a, b] = [await create(LOCAL), await create(LOCAL)]
    expect(a.json.data.id).not.toBe(b.json.data.id)
    expect(a.json.data.workflowId).not.toBe(b.json.data.workflowId)
  }, 60_000)

  test('another tenant sees none of it', async () => {
    const mine = await setup()
    const pkg = (await mine.create(LOCAL)).json.data
    const other = await modelTenant(env.api.url)
    const theirProfile = await makeProfile(env.api.sql, other.tenantId)
    const asOther = (path: string) => other.models.get(path)
    expect((await asOther(`/edge-inference-packages/${pkg.id}`)).status).toBe(404)
    expect((await asOther(`/edge-inference-packages/${pkg.id}/runs`)).status).toBe(404)
    expect((await asOther('/edge-inference-packages')).json.data).toEqual([])
    expect((await asOther(`/edge-inference-packages?modelVersionId=${mine.version.id}`)).json.data).toEqual([])
    const run = {
      stepsDone: 0,
      latencyMs: null,
      contractViolations: 0,
      exitReason: 'interrupted',
      violations: [],
      startedAt: '2026-01-01T00:00:00Z',
      finishedAt: '2026-01-01T00:00:01Z',
    }
    expect((await other.models.post(`/edge-inference-packages/${pkg.id}/runs`, run)).status).toBe(404)
    // Their version with my profile, my version with their profile: both unknown to the caller.
    const viaMyVersion = await other.models.post(`/model-versions/${mine.version.id}/edge-inference-package`, { ...LOCAL, embodimentProfileId: theirProfile })
    expect([viaMyVersion.status, viaMyVersion.json.code]).toEqual([404, 'MODEL_VERSION_NOT_FOUND'])
    const viaTheirProfile = await mine.create({ ...LOCAL, embodimentProfileId: theirProfile })
    expect([viaTheirProfile.status, viaTheirProfile.json.code]).toEqual([404, 'NOT_FOUND'])
    expect((await mine.t.models.get(`/edge-inference-packages/${pkg.id}`)).status).toBe(200)
    expect((await mine.t.models.get('/edge-inference-packages/not-a-uuid')).status).toBe(404)
  }, 60_000)

  test('the list filters by model version and status and pages', async () => {
    const { t, create } = await setup()
    const other = await makeVersion(env.api.sql, t.tenantId, t.general, { 'b.onnx': Buffer.from('b') })
    const ids = [(await create(LOCAL)).json.data.id, (await create(LOCAL)).json.data.id]
    const third = (await create(LOCAL, undefined, other.id)).json.data.id
    await Promise.all([...ids, third].map((id) => packageIn(t.models, id, ['ready'])))
    const first = await t.models.get('/edge-inference-packages?pageSize=2')
    expect(first.json.data.map((p: { id: string }) => p.id)).toEqual([third, ids[1]])
    const next = await t.models.get(`/edge-inference-packages?pageSize=2&pageToken=${first.json.nextPageToken}`)
    expect(next.json.data.map((p: { id: string }) => p.id)).toEqual([ids[0]])
    const byVersion = await t.models.get(`/edge-inference-packages?modelVersionId=${other.id}`)
    expect(byVersion.json.data.map((p: { id: string }) => p.id)).toEqual([third])
    expect((await t.models.get('/edge-inference-packages?status=queued')).json.data).toEqual([])
    expect((await t.models.get('/edge-inference-packages?status=ready')).json.data).toHaveLength(3)
  }, 90_000)

  test('a model object changed since validation fails the build for good, with its reason and event', async () => {
    const { t, create, version } = await setup()
    const [object] = version.objects
    await localS3().putObject(t.general, object!.key, Buffer.from('WEIGHTS'), 7)
    const res = await create(LOCAL)
    const failed = await packageIn(t.models, res.json.data.id, ['ready', 'failed'])
    expect(failed.status).toBe('failed')
    expect(failed.failureReason).toContain(object!.key)
    expect(failed.artifact).toBeNull()
    const events = await env.api.sql<
      { type: string; data: { reason: string } }[]
    >`select type, data from events where tenant_id = ${t.tenantId} and type like 'edge_package.%'`
    expect(events.map((e) => e.type)).toEqual(['edge_package.failed'])
    // Non-retryable: the archive activity ran once.
    const history = await env.t.client.workflow.getHandle(res.json.data.workflowId).fetchHistory()
    const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt)
    expect(Math.max(...attempts.map(Number))).toBe(1)
  }, 60_000)
})
