// The formatter and linter hold on the whole tree: `biome ci` is Biome's read-only check (formatting, lint, and the
// files biome.jsonc includes), so a change that is not formatted or breaks a rule fails the test command.
// `node_modules/.bin/biome check --write .` formats and applies the safe fixes.
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '../..')

test('biome ci finds nothing to format and no lint rule broken, warnings included', () => {
  const run = Bun.spawnSync([join(root, 'node_modules/.bin/biome'), 'ci', '--error-on-warnings', '--max-diagnostics=50', '--colors=off', '.'], {
    cwd: root,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const output = `${run.stdout.toString()}\n${run.stderr.toString()}`
  expect({ exitCode: run.exitCode, output: run.exitCode === 0 ? '' : output }).toEqual({ exitCode: 0, output: '' })
  // A run that checked nothing (a broken include pattern) would pass too: it must have read the tree.
  expect(Number(/Checked (\d+) files?/.exec(output)?.[1] ?? 0)).toBeGreaterThan(400)
})
