import { describe, expect, test } from 'bun:test'
import { TENANT_ID } from '../../workflows/contract'
import { modelsWorkflowIds } from '../../workflows/contract-models'
import { useApiAndTemporal, localS3 } from '../storage/helpers'
import { patFor, tenantOwner } from '../support/fixtures'
import { modelTenant, settled, sha256, uploadThroughUrls } from './support'

const env = useApiAndTemporal()

const eventsOf = (tenantId: string) =>
  env.api.sql<{ type: string; data: Record<string, unknown> }[]>`
  select type, data from events where tenant_id = ${tenantId} and type like 'model_version.%' order by occurred_at, id`.then((rows) => [...rows])

const onnxBytes = new Uint8Array(300_000).map((_, i) => (i * 31) % 251)

describe('model versions: register, upload, validate', () => {
  test('an imported checkpoint uploaded through its presigned URL validates to ready, with model_version.ready published', async () => {
    const t = await modelTenant(env.api.url)
    const created = await t.pat.post('/model-versions', {
      name: 'pick v1',
      format: 'onnx',
      source: { kind: 'imported_checkpoint', path: 'models/pick/v1.onnx', sizeBytes: onnxBytes.length, sha256: sha256(onnxBytes) },
    })
    expect(created.status).toBe(201)
    const v = created.json.data
    expect(v).toMatchObject({
      status: 'draft',
      format: 'onnx',
      failureReason: null,
      bucket: null,
      objects: [{ key: 'models/pick/v1.onnx', sizeBytes: onnxBytes.length, sha256: sha256(onnxBytes) }],
    })
    expect(v.validationWorkflowId).toBe(`model-version-validation/${t.tenantId}/${v.id}`)

    const urls = await uploadThroughUrls(t.pat, v.id, { 'models/pick/v1.onnx': onnxBytes })
    expect(urls.bucket).toBe(t.general)
    expect(new Date(urls.expiresAt).getTime()).toBeGreaterThan(Date.now())
    expect(new URL(urls.uploads[0].url).searchParams.get('X-Amz-Expires')).toBe('900')

    const started = await t.pat.post(`/model-versions/${v.id}/validations`)
    expect(started.status).toBe(202)
    expect(started.json.data).toMatchObject({ status: 'validating', bucket: t.general })
    const ready = await settled(t.pat, v.id)
    expect(ready).toMatchObject({
      status: 'ready',
      totalBytes: onnxBytes.length,
      objects: [{ key: 'models/pick/v1.onnx', sizeBytes: onnxBytes.length, sha256: sha256(onnxBytes) }],
    })
    expect(await eventsOf(t.tenantId)).toEqual([
      {
        type: 'model_version.ready',
        data: { modelVersionId: v.id, name: 'pick v1', format: 'onnx', sourceKind: 'imported_checkpoint', totalBytes: onnxBytes.length, projectId: null },
      },
    ])

    const wf = await env.t.client.workflow.getHandle(modelsWorkflowIds.validation(t.tenantId, v.id)).describe()
    expect(wf.typedSearchAttributes.get(TENANT_ID)).toBe(t.tenantId)

    // Ready is final: no more uploads, no second validation.
    for (const res of [await t.pat.post(`/model-versions/${v.id}/upload-urls`), await t.pat.post(`/model-versions/${v.id}/validations`)]) {
      expect([res.status, res.json.code]).toEqual([400, 'MODEL_VERSION_INVALID_STATUS'])
    }
  })

  test('a wrong sha256 fails the version with a reason naming the object, and model_version.failed is published', async () => {
    const t = await modelTenant(env.api.url)
    const wrong = sha256('something else')
    const v = (
      await t.pat.post('/model-versions', {
        name: 'pick v2',
        format: 'lerobot',
        source: { kind: 'model_bundle', prefix: 'bundles/pick-v2', objects: [{ key: 'config.json' }, { key: 'model.safetensors', sha256: wrong }] },
      })
    ).json.data
    await uploadThroughUrls(t.pat, v.id, { 'bundles/pick-v2/config.json': '{"type":"act"}', 'bundles/pick-v2/model.safetensors': onnxBytes })
    expect((await t.pat.post(`/model-versions/${v.id}/validations`)).status).toBe(202)
    const failed = await settled(t.pat, v.id)
    expect(failed.status).toBe('failed')
    expect(failed.failureReason).toBe(`object "bundles/pick-v2/model.safetensors" has SHA-256 ${sha256(onnxBytes)}; ${wrong} was declared`)
    expect(await eventsOf(t.tenantId)).toEqual([
      {
        type: 'model_version.failed',
        data: { modelVersionId: v.id, name: 'pick v2', format: 'lerobot', sourceKind: 'model_bundle', reason: failed.failureReason, projectId: null },
      },
    ])
    // A failed version may be validated again (after the objects were fixed); it fails the same way here.
    expect((await t.pat.post(`/model-versions/${v.id}/validations`)).json.data.status).toBe('validating')
    expect((await settled(t.pat, v.id)).status).toBe('failed')
  })

  test('a bundle: a missing object or a size other than declared is refused before validation starts; complete, it validates', async () => {
    const t = await modelTenant(env.api.url)
    const v = (
      await t.pat.post('/model-versions', {
        name: 'pi0 bundle',
        format: 'openpi',
        source: { kind: 'model_bundle', prefix: 'ckpt/pi0', objects: [{ key: 'params/weights.bin', sizeBytes: 5 }, { key: 'assets/norm_stats.json' }] },
      })
    ).json.data
    expect(v.objects.map((o: { key: string }) => o.key)).toEqual(['ckpt/pi0/params/weights.bin', 'ckpt/pi0/assets/norm_stats.json'])
    expect(v.source.prefix).toBe('ckpt/pi0/')
    await uploadThroughUrls(t.pat, v.id, { 'ckpt/pi0/params/weights.bin': '12345' })
    const missing = await t.pat.post(`/model-versions/${v.id}/validations`)
    expect([missing.status, missing.json.code]).toEqual([400, 'IMPORTED_CHECKPOINT_INCOMPLETE'])
    expect(missing.json.message).toContain('ckpt/pi0/assets/norm_stats.json')

    await uploadThroughUrls(t.pat, v.id, { 'ckpt/pi0/params/weights.bin': '1234', 'ckpt/pi0/assets/norm_stats.json': '{}' })
    const short = await t.pat.post(`/model-versions/${v.id}/validations`)
    expect([short.status, short.json.code]).toEqual([400, 'IMPORTED_CHECKPOINT_INCOMPLETE'])
    expect((await t.pat.get(`/model-versions/${v.id}`)).json.data.status).toBe('draft')

    await uploadThroughUrls(t.pat, v.id, { 'ckpt/pi0/params/weights.bin': '12345' })
    expect((await t.pat.post(`/model-versions/${v.id}/validations`)).status).toBe(202)
    expect(await settled(t.pat, v.id)).toMatchObject({ status: 'ready', totalBytes: 7 })
  })

  test('a missing imported checkpoint is 404 IMPORTED_CHECKPOINT_NOT_FOUND; the version stays a draft', async () => {
    const t = await modelTenant(env.api.url)
    const v = (
      await t.pat.post('/model-versions', { name: 'never uploaded', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'nowhere/model.onnx' } })
    ).json.data
    const res = await t.pat.post(`/model-versions/${v.id}/validations`)
    expect([res.status, res.json.code]).toEqual([404, 'IMPORTED_CHECKPOINT_NOT_FOUND'])
    expect((await t.pat.get(`/model-versions/${v.id}`)).json.data.status).toBe('draft')
  })

  test("a completed training job's output artifact becomes a version; the job's state and output are checked first", async () => {
    const t = await modelTenant(env.api.url)
    const job = async () => (await t.pat.post('/training-jobs', { name: 'train' })).json.data.id as string
    const fromJob = (trainingJobId: string) =>
      t.pat.post('/model-versions', { name: 'from job', format: 'onnx', source: { kind: 'training_job', trainingJobId } })

    const unknown = await fromJob(crypto.randomUUID())
    expect([unknown.status, unknown.json.code]).toEqual([404, 'MODEL_BUNDLE_JOB_NOT_FOUND'])
    const running = await job()
    const notDone = await fromJob(running)
    expect([notDone.status, notDone.json.code]).toEqual([400, 'TRAINING_JOB_NOT_COMPLETED'])
    await t.pat.post(`/training-jobs/${running}/completion`, { status: 'failed', reason: 'oom' })
    expect((await fromJob(running)).json.code).toBe('TRAINING_JOB_NOT_COMPLETED')
    const noOutput = await job()
    await t.pat.post(`/training-jobs/${noOutput}/completion`, { status: 'completed' })
    const none = await fromJob(noOutput)
    expect([none.status, none.json.code]).toEqual([400, 'TRAINING_JOB_HAS_NO_OUTPUT_ARTIFACT'])

    const good = await job()
    await t.pat.post(`/training-jobs/${good}/completion`, { status: 'completed', outputArtifactPath: 'runs/good/model.onnx' })
    await localS3().putObject(t.general, 'runs/good/model.onnx', Buffer.from(onnxBytes))
    const v = (await fromJob(good)).json.data
    expect(v).toMatchObject({
      source: { kind: 'training_job', trainingJobId: good },
      objects: [{ key: 'runs/good/model.onnx', sizeBytes: null, sha256: null }],
    })
    expect((await t.pat.post(`/model-versions/${v.id}/validations`)).status).toBe(202)
    expect(await settled(t.pat, v.id)).toMatchObject({
      status: 'ready',
      objects: [{ key: 'runs/good/model.onnx', sizeBytes: onnxBytes.length, sha256: sha256(onnxBytes) }],
    })

    // A job of another tenant is as unknown as a made-up id.
    const other = await modelTenant(env.api.url)
    const foreign = await other.pat.post('/model-versions', { name: 'x', format: 'onnx', source: { kind: 'training_job', trainingJobId: good } })
    expect([foreign.status, foreign.json.code]).toEqual([404, 'MODEL_BUNDLE_JOB_NOT_FOUND'])
  })

  test("sources that are not keys in the tenant's general bucket are refused with their code", async () => {
    const owner = await tenantOwner(env.api.url) // no storage needed: nothing is read on registration
    const pat = owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write'])).token)
    const register = (source: Record<string, unknown>) => pat.post('/model-versions', { name: 'bad', format: 'onnx', source })
    const cases: [Record<string, unknown>, string][] = [
      ...[
        '../up/model.onnx',
        'a/../../model.onnx',
        '/abs/model.onnx',
        'dir\\model.onnx',
        's3://other-bucket/model.onnx',
        'rcp-0123456789abcdef0123-general/model.onnx',
        '',
        'a//b.onnx',
        './model.onnx',
        'dir/',
      ].map((path): [Record<string, unknown>, string] => [{ kind: 'imported_checkpoint', path }, 'IMPORTED_CHECKPOINT_INVALID_PATH']),
      [{ kind: 'model_bundle', objects: [{ key: 'a' }] }, 'MODEL_BUNDLE_PREFIX_REQUIRED'],
      [{ kind: 'model_bundle', prefix: '', objects: [{ key: 'a' }] }, 'MODEL_BUNDLE_PREFIX_REQUIRED'],
      [{ kind: 'model_bundle', prefix: '../escape', objects: [{ key: 'a' }] }, 'MODEL_BUNDLE_PREFIX_INVALID'],
      [{ kind: 'model_bundle', prefix: '/abs', objects: [{ key: 'a' }] }, 'MODEL_BUNDLE_PREFIX_INVALID'],
      [{ kind: 'model_bundle', prefix: 'ok' }, 'MODEL_BUNDLE_OBJECTS_REQUIRED'],
      [{ kind: 'model_bundle', prefix: 'ok', objects: [] }, 'MODEL_BUNDLE_OBJECTS_REQUIRED'],
      [{ kind: 'model_bundle', prefix: 'ok', objects: [{ key: '../../x' }] }, 'IMPORTED_CHECKPOINT_INVALID_PATH'],
      [{ kind: 'model_bundle', prefix: 'ok', objects: [{ key: 'a' }, { key: 'a' }] }, 'VALIDATION_ERROR'],
      [{ kind: 'imported_checkpoint', path: 'm.onnx', trainingJobId: crypto.randomUUID() }, 'VALIDATION_ERROR'],
      [{ kind: 'imported_checkpoint', path: 'm.onnx', sha256: 'ABC' }, 'VALIDATION_ERROR'],
    ]
    for (const [source, code] of cases) {
      const res = await register(source)
      expect({ source, status: res.status, code: res.json.code }).toEqual({ source, status: code === 'VALIDATION_ERROR' ? 400 : 400, code })
    }
    expect((await pat.get('/model-versions')).json.data).toEqual([])
    // Before the tenant's storage exists a draft may be registered, but there is nowhere to upload to yet.
    const v = (await register({ kind: 'imported_checkpoint', path: 'later/model.onnx' })).json.data
    const early = await pat.post(`/model-versions/${v.id}/upload-urls`)
    expect([early.status, early.json.code]).toEqual([400, 'STORAGE_NOT_READY'])
  })

  test('lists filter by status and format; another tenant gets MODEL_VERSION_NOT_FOUND on every id route and an empty list', async () => {
    const a = await modelTenant(env.api.url)
    const onnx = (await a.pat.post('/model-versions', { name: 'o', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'o.onnx' } })).json.data
    const lerobot = (await a.pat.post('/model-versions', { name: 'l', format: 'lerobot', source: { kind: 'imported_checkpoint', path: 'l.bin' } })).json.data
    const ids = async (q: string) => (await a.pat.get(`/model-versions${q}`)).json.data.map((v: { id: string }) => v.id)
    expect(await ids('')).toEqual([lerobot.id, onnx.id])
    expect(await ids('?format=onnx')).toEqual([onnx.id])
    expect(await ids('?status=draft&format=lerobot')).toEqual([lerobot.id])
    expect(await ids('?status=ready')).toEqual([])

    const b = await modelTenant(env.api.url)
    expect((await b.pat.get('/model-versions')).json.data).toEqual([])
    for (const res of [
      await b.pat.get(`/model-versions/${onnx.id}`),
      await b.pat.post(`/model-versions/${onnx.id}/upload-urls`),
      await b.pat.post(`/model-versions/${onnx.id}/validations`),
      await a.pat.get(`/model-versions/${crypto.randomUUID()}`),
      await a.pat.get('/model-versions/not-a-uuid'),
    ])
      expect([res.status, res.json.code]).toEqual([404, 'MODEL_VERSION_NOT_FOUND'])
    expect((await a.pat.get(`/model-versions/${onnx.id}`)).json.data.status).toBe('draft')
  })
})
