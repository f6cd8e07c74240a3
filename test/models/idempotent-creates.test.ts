import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { modelWriter } from './support'

const api = useApi()

describe('creating with an Idempotency-Key', () => {
  test('a repeated create replays the first answer; the same key with another body is IDEMPOTENCY_CONFLICT', async () => {
    const { pat, tenantId } = await modelWriter(api.url)
    const profile = {
      name: 'p',
      robotType: 'arm',
      controlRateHz: 10,
      observationFeatures: [{ name: 's', dtype: 'float32', shape: [3] }],
      actionFeatures: [{ name: 'a', dtype: 'float32', shape: [3] }],
    }
    const creates: [string, Record<string, unknown>][] = [
      ['/training-jobs', { name: 'once' }],
      ['/embodiment-profiles', profile],
      ['/model-versions', { name: 'once', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'm.onnx' } }],
    ]
    for (const [path, body] of creates) {
      const headers = { 'idempotency-key': crypto.randomUUID() }
      const first = await pat.post(path, body, headers)
      const again = await pat.post(path, body, headers)
      expect({ path, first: first.status, again: again.status, same: again.json.data.id === first.json.data.id }).toEqual({
        path,
        first: 201,
        again: 201,
        same: true,
      })
      const other = await pat.post(path, { ...body, name: 'another' }, headers)
      expect({ path, status: other.status, code: other.json.code }).toEqual({ path, status: 409, code: 'IDEMPOTENCY_CONFLICT' })
    }
    const [counts] = await api.sql<{ jobs: number; profiles: number; versions: number }[]>`
      select (select count(*)::int from training_jobs where tenant_id = ${tenantId}) as jobs,
             (select count(*)::int from embodiment_profiles where tenant_id = ${tenantId}) as profiles,
             (select count(*)::int from model_versions where tenant_id = ${tenantId}) as versions`
    expect(counts).toEqual({ jobs: 1, profiles: 1, versions: 1 })
  })
})
