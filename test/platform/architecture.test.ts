import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')

async function importsOf(file: string): Promise<string[]> {
  const src = await Bun.file(join(ROOT, file)).text()
  return [...src.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!)
}

const resolveLocal = (file: string, spec: string) => (spec.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), spec)) : spec)

async function files(pattern: string) {
  return Array.fromAsync(new Glob(pattern).scan({ cwd: ROOT }))
}

describe('import direction', () => {
  test('api/ never imports worker/ or activities/; workflows/ only their contract and types', async () => {
    for (const file of await files('api/**/*.ts')) {
      for (const spec of await importsOf(file)) {
        const target = resolveLocal(file, spec)
        expect({ file, target, ok: !/^(worker|activities)\//.test(target) }).toMatchObject({ ok: true })
        if (target.startsWith('workflows/')) expect({ file, target }).toMatchObject({ target: expect.stringMatching(/^workflows\/contract/) })
      }
    }
  })

  test('activities/ and workflows/ never import Elysia or the HTTP layer; domain services and queries never import Elysia', async () => {
    // api/http/*-queries.ts own the HTTP layer's tables (idempotency_keys) and are plain SQL like any queries
    // module: checked here as framework-free, they are the one part of api/http the others may call.
    const framework = [...(await files('activities/**/*.ts')), ...(await files('workflows/**/*.ts')),
      ...(await files('api/*/service.ts')), ...(await files('api/*/queries.ts')), ...(await files('api/platform/**/*.ts')),
      ...(await files('api/http/*-queries.ts'))]
    expect(framework.length).toBeGreaterThan(5)
    for (const file of framework) {
      for (const spec of await importsOf(file)) {
        const target = resolveLocal(file, spec)
        const httpQueries = /^api\/http\/[\w-]+-queries(\.ts)?$/.test(target)
        const bad = spec === 'elysia' || spec.startsWith('@elysiajs/') || (/^api\/(http|app|main)\b/.test(target) && !httpQueries)
        expect({ file, spec, bad }).toMatchObject({ bad: false })
      }
    }
  })
})
