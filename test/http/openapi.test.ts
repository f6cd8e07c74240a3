import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startApi, type TestApi } from '../support/api'

let api: TestApi
let doc: any
beforeAll(async () => {
  api = await startApi()
  doc = await (await fetch(`${api.url}/v1/openapi.json`)).json()
})
afterAll(async () => {
  await api.stop()
})

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => Object.entries(ops).map(([method, op]) => ({ path, method, op: op as any })))

describe('OpenAPI 3.1 document', () => {
  test('is 3.1 and names every DTO of the published interface under components.schemas', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./)
    const spec = await Bun.file(join(import.meta.dir, '..', '..', '..', 'shared', 'spec', 'published-interface.md')).text()
    const named = new Set([...spec.matchAll(/\b([A-Z][A-Za-z]+Dto)\b/g)].map((m) => m[1]!))
    expect(named.size).toBeGreaterThan(40)
    // The edge inference package operation has not been built yet; everything else must be there by name.
    const notYetBuilt = ['EdgeInferencePackageDto']
    const missing = [...named].filter((n) => !(n in doc.components.schemas) && !notYetBuilt.includes(n))
    expect(missing).toEqual([])
    expect(doc.components.schemas.ProblemJson).toBeDefined()
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

  test('401, 403 and 429 answer the published PublishedAuthProblem, a ProblemJson; every operation documents 431 and 503', async () => {
    const spec = await Bun.file(join(import.meta.dir, '..', '..', '..', 'shared', 'spec', 'published-interface.md')).text()
    expect(spec).toContain('| PublishedAuthProblem |')
    const shape = doc.components.schemas.PublishedAuthProblem
    expect(shape.allOf).toEqual([{ $ref: '#/components/schemas/ProblemJson' }])
    let auth = 0
    for (const { path, method, op } of operations().filter((o) => o.path.startsWith('/v1/'))) {
      const label = `${method.toUpperCase()} ${path}`
      for (const [status, r] of Object.entries(op.responses ?? {}) as [string, any][]) {
        if (Number(status) < 400) continue
        const ref = r.content['application/problem+json'].schema.$ref
        const want = ['401', '403', '429'].includes(status) ? 'PublishedAuthProblem' : 'ProblemJson'
        expect({ label, status, ref }).toEqual({ label, status, ref: `#/components/schemas/${want}` })
        if (want === 'PublishedAuthProblem') auth++
      }
      expect({ label, documents431: '431' in op.responses }).toEqual({ label, documents431: true })
      // The database drill's answer (test/platform/postgres-outage.test.ts), with its Retry-After.
      expect({ label, retryAfter: op.responses['503']?.headers?.['Retry-After']?.schema?.type }).toEqual({ label, retryAfter: 'integer' })
    }
    expect(auth).toBeGreaterThan(100)
  })
})
