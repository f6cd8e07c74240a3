// A model version's objects uploaded through the API itself (PUT /v1/model-versions/{id}/object-content), the way the
// console uploads: streamed to the tenant's general bucket past the JSON body limit, within MODEL_UPLOAD_MAX_BYTES,
// only for the version's own keys at their declared sizes, only while it is a draft, only with model:write.
import { beforeAll, describe, expect, test } from 'bun:test'
import { bucketsIn, useApiAndTemporal } from '../storage/helpers'
import { patFor, tenantOwner } from '../support/fixtures'
import { modelTenant, modelWriter, settled, sha256 } from './support'
import { sealAudit } from '../support/audit'

const UPLOAD_MAX = 3 * 1024 * 1024
const env = useApiAndTemporal({ MODEL_UPLOAD_MAX_BYTES: String(UPLOAD_MAX) })

// A focused run's worker may still be starting: the first provisioning waits for it, longer than the tests' own.
beforeAll(async () => {
  const warm = await tenantOwner(env.api.url)
  await warm.client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local' } })
  await bucketsIn(warm.client, 'ready', 150_000)
}, 160_000)

const put = (token: string, versionId: string, key: string, body: BodyInit | null, headers: Record<string, string> = {}) =>
  fetch(`${env.api.url}/v1/model-versions/${versionId}/object-content?key=${encodeURIComponent(key)}`, {
    method: 'PUT',
    body,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', ...headers },
  }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }))

// Above the 1 MiB JSON limit: the upload route alone reads more.
const weights = new Uint8Array(1_500_000).map((_, i) => (i * 7) % 253)
const config = new TextEncoder().encode('{"chunk": 50}')

describe('model versions: objects uploaded through the API', () => {
  test('a bundle uploaded object by object (one past the JSON limit) validates to ready, each upload audited', async () => {
    const t = await modelTenant(env.api.url)
    const token = (await patFor(t.client, ['model:read', 'model:write'])).token
    const created = await t.pat.post('/model-versions', {
      name: 'bundle',
      format: 'openpi',
      source: { kind: 'model_bundle', prefix: 'ckpt/b1', objects: [{ key: 'params/w.bin', sizeBytes: weights.length }, { key: 'config.json' }] },
    })
    expect(created.status).toBe(201)
    const v = created.json.data
    const up1 = await put(token, v.id, 'ckpt/b1/params/w.bin', weights)
    expect(up1).toEqual({ status: 200, json: { data: { key: 'ckpt/b1/params/w.bin', sizeBytes: weights.length }, meta: expect.anything() } })
    expect((await put(token, v.id, 'ckpt/b1/config.json', config)).status).toBe(200)

    expect((await t.pat.post(`/model-versions/${v.id}/validations`)).status).toBe(202)
    const ready = await settled(t.pat, v.id)
    expect(ready.status).toBe('ready')
    expect(ready.objects.map((o: { sha256: string }) => o.sha256)).toEqual([sha256(weights), sha256(config)])
    // Uploads end when validation starts.
    const late = await put(token, v.id, 'ckpt/b1/config.json', config)
    expect([late.status, late.json.code]).toEqual([400, 'MODEL_VERSION_INVALID_STATUS'])

    await sealAudit(env.api.sql)
    const audit = await env.api.sql<{ details: Record<string, unknown> }[]>`
      select details from audit_log where tenant_id = ${t.tenantId} and action = 'model_version.object_uploaded' order by seq`
    expect(audit.map((a) => a.details)).toEqual([
      { key: 'ckpt/b1/params/w.bin', sizeBytes: weights.length },
      { key: 'ckpt/b1/config.json', sizeBytes: config.length },
    ])
  }, 60_000)

  test('refused: another key, another size, over MODEL_UPLOAD_MAX_BYTES, a read-only token, another tenant, no storage yet', async () => {
    const t = await modelTenant(env.api.url)
    const token = (await patFor(t.client, ['model:read', 'model:write'])).token
    const v = (
      await t.pat.post('/model-versions', {
        name: 'one',
        format: 'onnx',
        source: { kind: 'imported_checkpoint', path: 'models/one.onnx', sizeBytes: config.length },
      })
    ).json.data
    const unknownKey = await put(token, v.id, 'models/other.onnx', config)
    expect([unknownKey.status, unknownKey.json.code, unknownKey.json.errors]).toEqual([
      400,
      'VALIDATION_ERROR',
      [{ path: 'query.key', message: expect.any(String) }],
    ])
    const wrongSize = await put(token, v.id, 'models/one.onnx', weights)
    expect([wrongSize.status, wrongSize.json.code]).toEqual([400, 'IMPORTED_CHECKPOINT_INCOMPLETE'])
    const free = (await t.pat.post('/model-versions', { name: 'free', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'models/free.onnx' } })).json
      .data
    const tooBig = await put(token, free.id, 'models/free.onnx', new Uint8Array(UPLOAD_MAX + 1))
    expect([tooBig.status, tooBig.json.code]).toEqual([400, 'BAD_REQUEST'])
    expect(tooBig.json.message).toContain(String(UPLOAD_MAX))

    const reader = (await patFor(t.client, ['model:read'])).token
    expect((await put(reader, v.id, 'models/one.onnx', config)).status).toBe(403)
    const other = await modelWriter(env.api.url)
    const otherToken = (await patFor(other.client, ['model:read', 'model:write'])).token
    const foreign = await put(otherToken, v.id, 'models/one.onnx', config)
    expect([foreign.status, foreign.json.code]).toEqual([404, 'MODEL_VERSION_NOT_FOUND'])
    const own = (await other.pat.post('/model-versions', { name: 'x', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'models/x.onnx' } })).json
      .data
    const noStorage = await put(otherToken, own.id, 'models/x.onnx', config)
    expect([noStorage.status, noStorage.json.code]).toEqual([400, 'STORAGE_NOT_READY'])

    // Nothing refused reached the bucket: the only upload that counts is still to come.
    expect((await put(token, v.id, 'models/one.onnx', config)).status).toBe(200)
    await sealAudit(env.api.sql)
    const uploads = await env.api.sql`select 1 from audit_log where tenant_id = ${t.tenantId} and action = 'model_version.object_uploaded'`
    expect(uploads.length).toBe(1)
  }, 60_000)
})
