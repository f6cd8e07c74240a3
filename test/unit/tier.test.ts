// The fast tier runs with no server (./scripts/test --fast): its files may import the code under test and each
// other, never the suite's helpers in test/support, which start or reach Postgres, Temporal, MinIO or the mail catcher.
import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const UNIT = import.meta.dir
const TEST = dirname(UNIT)

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))

// Bun's own parser, not a pattern: an import written inside a string (the architecture test's samples) is no import.
const transpiler = new Bun.Transpiler({ loader: 'ts' })

/** The imports of `source` (at `file`) that leave test/unit for the rest of test/. */
const crossings = (file: string, source: string) =>
  transpiler
    .scanImports(source)
    .filter((i) => i.path.startsWith('.'))
    .map((i) => resolve(dirname(file), i.path))
    .filter((p) => p.startsWith(`${TEST}/`) && !p.startsWith(`${UNIT}/`))
    .map((p) => `${relative(TEST, file)} imports ${relative(TEST, p)}`)

test('no file of the fast tier imports a helper of the server tier', () => {
  expect(files(UNIT).flatMap((f) => crossings(f, readFileSync(f, 'utf8')))).toEqual([])
})

test('what the check counts as crossing', () => {
  const file = join(UNIT, 'workflows', 'x.test.ts')
  const source = [
    "import { useApi } from '../../support/api'",
    "const m = await import('../../webhooks/delivery-helpers')",
    "import { useTimeSkipping } from '../support/time-skipping'",
    "import { etagOf } from '../../../api/platform/etag'",
    'const sample = "import { useApi } from \'../../support/api\'"',
  ].join('\n')
  expect(crossings(file, source)).toEqual(['unit/workflows/x.test.ts imports support/api', 'unit/workflows/x.test.ts imports webhooks/delivery-helpers'])
})
