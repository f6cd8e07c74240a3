// The SDK's generated files are committed (a client reads them without a build), so they must be what the current
// OpenAPI document produces: a route or model changed without `bun scripts/api-types.ts` fails here.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openapiDocument, pythonOperationsFile, SDK_DIR, sdkFiles } from '../../scripts/api-types'
import { PYTHON_SDK_DIR } from '../../scripts/python-sdk'
import { firstDifference } from './support/first-difference'

test("clients/ts/*.gen.ts are exactly what the app's /v1/openapi.json produces", async () => {
  const expected = await sdkFiles(await openapiDocument())
  expect(Object.keys(expected).sort()).toEqual(['operations.gen.ts', 'schema.gen.ts'])
  for (const [name, text] of Object.entries(expected)) {
    const committed = readFileSync(join(SDK_DIR, name), 'utf8')
    // toBe on 800 KB would print both; name the file and the first line that differs instead.
    const a = committed.split('\n')
    const b = text.split('\n')
    const at = a.findIndex((line, i) => line !== b[i])
    expect({ file: name, firstDifference: at === -1 && a.length === b.length ? null : { line: at + 1, committed: a[at], generated: b[at] } }).toEqual({
      file: name,
      firstDifference: null,
    })
  }
}, 60_000)

// The Python SDK's tables need no generator venv, so they are compared here; its schema_gen.py in the full tier
// (test/clients/python-sdk-generated.test.ts).
test("clients/python/rcp_sdk/operations_gen.py is exactly what the app's /v1/openapi.json produces", async () => {
  const committed = readFileSync(join(PYTHON_SDK_DIR, 'operations_gen.py'), 'utf8')
  expect(firstDifference(committed, pythonOperationsFile(await openapiDocument()))).toBeNull()
}, 60_000)

test('the tables the client reads at run time come from the document: a new Idempotency-Key or list shows up', async () => {
  const { operationTables } = await import('../../scripts/api-types')
  const doc = {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/v1/things': {
        get: { parameters: [{ name: 'pageToken', in: 'query' }], responses: {} },
        post: { parameters: [{ name: 'Idempotency-Key', in: 'header' }], responses: {} },
      },
      '/v1/things/{id}': { get: { parameters: [{ name: 'id', in: 'path' }], responses: {} } },
    },
  }
  const text = operationTables(doc as never)
  expect(text).toContain('"POST /v1/things",')
  expect(text).toContain('"/v1/things",\n] as const')
  expect(text).not.toContain('/v1/things/{id}')
  const python = pythonOperationsFile(doc as never)
  expect(python).toContain('IDEMPOTENT_OPERATIONS: frozenset[str] = frozenset(\n    {\n        "POST /v1/things",\n    }\n)')
  expect(python).toContain('LIST_PATHS: frozenset[str] = frozenset(\n    {\n        "/v1/things",\n    }\n)')
  expect(python).not.toContain('/v1/things/{id}')
})
