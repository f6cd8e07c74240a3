// What the package build relies on (api/edge-packages): findModelVersion gives the validated objects and their
// bucket, and assertSourceStillPresent refuses a version whose objects changed or vanished since validation.
import { describe, expect, test } from 'bun:test'
import { findModelVersion } from '../../api/model-versions/queries'
import { assertSourceStillPresent } from '../../api/model-versions/objects'
import { localS3, useApiAndTemporal } from '../storage/helpers'
import { modelTenant, settled, sha256, uploadThroughUrls } from './support'

const env = useApiAndTemporal()

const refusal = async (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: { code?: string; status?: number }) => [err.status, err.code],
  )

describe('the source of a ready version, checked again before a package is built', () => {
  test('a checkpoint removed or replaced by one of another size after validation is refused; a draft is not ready', async () => {
    const t = await modelTenant(env.api.url)
    const v = (await t.pat.post('/model-versions', { name: 'm', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'm/model.onnx' } })).json.data
    const draft = (await findModelVersion(env.api.sql, t.tenantId, v.id))!
    expect(await refusal(assertSourceStillPresent(env.api.deps, t.tenantId, draft))).toEqual([400, 'MODEL_VERSION_INVALID_STATUS'])

    await uploadThroughUrls(t.pat, v.id, { 'm/model.onnx': 'onnx bytes' })
    await t.pat.post(`/model-versions/${v.id}/validations`)
    await settled(t.pat, v.id)
    const ready = (await findModelVersion(env.api.sql, t.tenantId, v.id))!
    expect(ready).toMatchObject({
      status: 'ready',
      bucket: t.general,
      region_id: 'local',
      objects: [{ key: 'm/model.onnx', sizeBytes: 10, sha256: sha256('onnx bytes') }],
    })
    expect(await refusal(assertSourceStillPresent(env.api.deps, t.tenantId, ready))).toBeNull()
    expect(await findModelVersion(env.api.sql, crypto.randomUUID(), v.id)).toBeUndefined()
    expect(await refusal(assertSourceStillPresent(env.api.deps, crypto.randomUUID(), ready))).toEqual([404, 'MODEL_VERSION_NOT_FOUND'])

    await localS3().putObject(t.general, 'm/model.onnx', Buffer.from('other onnx bytes'))
    expect(await refusal(assertSourceStillPresent(env.api.deps, t.tenantId, ready))).toEqual([400, 'IMPORTED_CHECKPOINT_INCOMPLETE'])
    await localS3().removeObject(t.general, 'm/model.onnx')
    expect(await refusal(assertSourceStillPresent(env.api.deps, t.tenantId, ready))).toEqual([404, 'IMPORTED_CHECKPOINT_NOT_FOUND'])
  })

  test('a bundle missing one of its objects is incomplete', async () => {
    const t = await modelTenant(env.api.url)
    const v = (
      await t.pat.post('/model-versions', {
        name: 'b',
        format: 'lerobot',
        source: { kind: 'model_bundle', prefix: 'b', objects: [{ key: 'config.json' }, { key: 'model.safetensors' }] },
      })
    ).json.data
    await uploadThroughUrls(t.pat, v.id, { 'b/config.json': '{}', 'b/model.safetensors': 'weights' })
    await t.pat.post(`/model-versions/${v.id}/validations`)
    expect((await settled(t.pat, v.id)).status).toBe('ready')
    await localS3().removeObject(t.general, 'b/model.safetensors')
    const ready = (await findModelVersion(env.api.sql, t.tenantId, v.id))!
    expect(await refusal(assertSourceStillPresent(env.api.deps, t.tenantId, ready))).toEqual([400, 'IMPORTED_CHECKPOINT_INCOMPLETE'])
  })
})
