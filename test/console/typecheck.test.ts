// The console is typed from our own OpenAPI document: its sources pass `tsc` against the types generated from the
// document the app serves, and fail it when a response shape they use changes (here: a field renamed). Both copies are
// checked in one tsc program, so a green result also needs the served copy's error list to be empty.
import { describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { OpenAPI3 } from 'openapi-typescript'
import { UI, writeApiTypes } from '../../scripts/build-console'
import { useApi } from '../support/api'

const ROOT = join(import.meta.dir, '..', '..')
const api = useApi()

/** Copies of the console's sources (and the permission table they import) under the repository, so node_modules
 *  resolves, one per document, each with the types generated from its document, checked by ONE tsc program with the
 *  console's own compiler options: the DOM library and preact's types are read once for all of them. Answers each
 *  copy's error lines. */
async function typecheck(docs: Record<string, OpenAPI3>): Promise<{ code: number; errors: Record<string, string[]> }> {
  const dir = join(ROOT, '.cache', `console-typecheck-${process.pid}-${Math.random().toString(36).slice(2)}`)
  try {
    for (const [name, doc] of Object.entries(docs)) {
      const copy = join(dir, name)
      cpSync(UI, join(copy, 'api', 'console', 'ui'), { recursive: true, filter: (f) => !f.endsWith('.gen.ts') })
      mkdirSync(join(copy, 'api', 'identity'), { recursive: true })
      cpSync(join(ROOT, 'api', 'identity', 'permissions.ts'), join(copy, 'api', 'identity', 'permissions.ts'))
      await writeApiTypes(doc, join(copy, 'api', 'console', 'ui', 'api-types.gen.ts'))
    }
    const ui = JSON.parse(readFileSync(join(UI, 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { compilerOptions: object }
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.json'),
        compilerOptions: ui.compilerOptions,
        include: Object.keys(docs).map((name) => `${name}/api/console/ui`),
      }),
    )
    const tsc = Bun.spawn([join(ROOT, 'node_modules', '.bin', 'tsc'), '--noEmit', '--pretty', 'false', '-p', dir], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
    const output = (await new Response(tsc.stdout).text()) + (await new Response(tsc.stderr).text())
    const lines = output.split('\n').filter(Boolean)
    const errors = Object.fromEntries(Object.keys(docs).map((name) => [name, lines.filter((l) => l.startsWith(`${name}/`))]))
    return { code: await tsc.exited, errors }
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
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as OpenAPI3
    const { code, errors } = await typecheck({ served: doc, renamed: renamed(doc, 'tenantName', 'organisationName') as OpenAPI3 })
    expect(errors.served).toEqual([])
    expect(code).not.toBe(0)
    expect(errors.renamed!.join('\n')).toContain("Property 'tenantName' does not exist")
  }, 300_000) // one tsc program, CPU-bound, beside the other test files on the same cores
})
