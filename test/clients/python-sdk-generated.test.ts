// The Python SDK's generated models are committed (a client reads them without a build), so they must be what the
// current OpenAPI document produces through the pinned generator. Here rather than in the fast tier: running the
// generator needs its venv (built once under ~/.cache/rcp, about a minute) and about ten seconds per run.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openapiDocument } from '../../scripts/api-types'
import { PYTHON_SDK_DIR, pythonSchema } from '../../scripts/python-sdk'
import { firstDifference } from '../unit/support/first-difference'

test("clients/python/rcp_sdk/schema_gen.py is exactly what the pinned generator makes of the app's /v1/openapi.json", async () => {
  const generated = await pythonSchema(await openapiDocument())
  expect(generated).toContain('class ProblemJson(TypedDict')
  expect(firstDifference(readFileSync(join(PYTHON_SDK_DIR, 'schema_gen.py'), 'utf8'), generated)).toBeNull()
}, 300_000)

test('a schema the document gains shows up in the generated models', async () => {
  const doc = await openapiDocument()
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>
  const grown = {
    ...doc,
    components: { ...doc.components, schemas: { ...schemas, FreshThingDto: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } },
  }
  expect(await pythonSchema(grown as never)).toMatch(/^class FreshThingDto\(TypedDict.*\):\n {4}id: str\n/m)
}, 300_000)
