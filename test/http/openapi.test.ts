import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApi, type TestApi } from '../support/api'

let api: TestApi
let doc: any
beforeAll(async () => {
  api = await startApi()
  doc = await (await fetch(`${api.url}/v1/openapi.json`)).json()
})
afterAll(async () => { await api.stop() })

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => Object.entries(ops).map(([method, op]) => ({ path, method, op: op as any })))

describe('OpenAPI 3.1 document', () => {
  test('is 3.1 and names the interface DTOs under components.schemas', () => {
    expect(doc.openapi).toMatch(/^3\.1\./)
    for (const name of [
      'AuthSessionEnvelopeSwaggerDto', 'AuthMeResponseDto', 'UpdateCurrentUserBodyDto', 'UpdateCurrentUserResponseDto', 'CurrentUserSessionDto',
      'CreateSessionBodyDto', 'CreateTenantBodyDto', 'CreateTenantResponseEnvelopeSwaggerDto', 'ApiKeySummaryDto', 'CreateApiKeyBodyDto',
      'CreateApiKeyResponseDto', 'TokenSelfDto', 'StorageRegionsResponseDto', 'ProblemJson',
    ]) expect(Object.keys(doc.components.schemas)).toContain(name)
    expect(JSON.stringify(doc)).not.toContain('#/$defs/')
  })

  test('every /v1 operation documents its problem codes, and authenticated ones their security and permission', () => {
    const ops = operations().filter((o) => o.path.startsWith('/v1/'))
    expect(ops.length).toBeGreaterThanOrEqual(8)
    for (const { path, method, op } of ops) {
      const label = `${method.toUpperCase()} ${path}`
      const problem = Object.entries(op.responses ?? {}).filter(([s]) => Number(s) >= 400)
      expect({ label, documentedErrors: problem.length > 0 }).toEqual({ label, documentedErrors: true })
      for (const [, r] of problem) expect((r as any).content['application/problem+json']).toBeDefined()
      if (op.security?.length) expect({ label, perms: Array.isArray(op['x-permissions']) }).toEqual({ label, perms: true })
    }
    const tenants = doc.paths['/v1/tenants'].post
    expect(tenants.parameters.some((p: any) => p.name === 'Idempotency-Key' && p.in === 'header')).toBe(true)
    expect(doc.paths['/v1/users/me'].patch.responses['412']).toBeDefined()
  })

  test('the docs page is served', async () => {
    const res = await fetch(`${api.url}/v1/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
  })
})
