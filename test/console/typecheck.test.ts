// The console is typed from our own OpenAPI document: its sources pass `tsc` against the types generated from the
// document the app serves, and fail it when a response shape they use changes (here: a field renamed).
import { describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { OpenAPI3 } from 'openapi-typescript'
import { UI, writeApiTypes } from '../../scripts/build-console'
import { useApi } from '../support/api'

const ROOT = join(import.meta.dir, '..', '..')
const api = useApi()

/** A copy of the console's sources (and the permission table they import) under the repository, so node_modules
 *  resolves, checked with its own tsconfig against the types generated from `doc`. */
async function typecheck(doc: OpenAPI3): Promise<{ code: number; output: string }> {
  const dir = join(ROOT, '.cache', `console-typecheck-${process.pid}-${Math.random().toString(36).slice(2)}`)
  try {
    cpSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'))
    cpSync(UI, join(dir, 'api', 'console', 'ui'), { recursive: true, filter: (f) => !f.endsWith('.gen.ts') })
    mkdirSync(join(dir, 'api', 'identity'), { recursive: true })
    cpSync(join(ROOT, 'api', 'identity', 'permissions.ts'), join(dir, 'api', 'identity', 'permissions.ts'))
    await writeApiTypes(doc, join(dir, 'api', 'console', 'ui', 'api-types.gen.ts'))
    const tsc = Bun.spawn([join(ROOT, 'node_modules', '.bin', 'tsc'), '--noEmit', '-p', join(dir, 'api', 'console', 'ui')], { stdout: 'pipe', stderr: 'pipe' })
    const output = (await new Response(tsc.stdout).text()) + (await new Response(tsc.stderr).text())
    return { code: await tsc.exited, output }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The document with every schema property `from` renamed `to`, as a changed response shape would be. */
function renamed(doc: unknown, from: string, to: string): unknown {
  if (Array.isArray(doc)) return doc.map((d) => renamed(d, from, to))
  if (!doc || typeof doc !== 'object') return doc
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'properties' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name === from ? to : name, renamed(s, from, to)]))
    } else if (k === 'required' && Array.isArray(v)) {
      out[k] = v.map((n) => (n === from ? to : n))
    } else out[k] = renamed(v, from, to)
  }
  return out
}

describe('console type check', () => {
  test('passes against the served document and fails when a response field it reads is renamed', async () => {
    const doc = await (await fetch(`${api.url}/v1/openapi.json`)).json() as OpenAPI3
    const good = await typecheck(doc)
    expect({ code: good.code, output: good.output }).toEqual({ code: 0, output: '' })
    const changed = await typecheck(renamed(doc, 'tenantName', 'organisationName') as OpenAPI3)
    expect(changed.code).not.toBe(0)
    expect(changed.output).toContain("Property 'tenantName' does not exist")
  }, 300_000) // two tsc runs, CPU-bound, beside the other test files on the same cores
})
