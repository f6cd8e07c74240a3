import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
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
})
