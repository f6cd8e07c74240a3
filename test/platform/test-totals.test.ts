// `./scripts/test` ends with bun test's own totals (scripts/test-totals.ts). The runner starts bun test with
// `--parallel`, whose coordinator prints the files' results as its workers send them: the totals read from that output
// are the ones bun counted, the same as a serial run of the same files gives.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bunTotals, failedTests, junitFailures, junitSkipped, skippedLine, SKIP_REASONS, sumTotals } from '../../scripts/test-totals'

/** Four files: six tests pass, two fail, one file also prints lines that look like a summary. */
function fixtureSuite(): string {
  const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'totals-'))
  const file = (name: string, body: string) => writeFileSync(join(dir, name), `import { expect, test } from 'bun:test'\n${body}\n`)
  file('a.test.ts', "test('a1', async () => { await Bun.sleep(50) })\ntest('a2', () => expect(1).toBe(1))")
  file('b.test.ts', "test('b1', async () => { await Bun.sleep(50) })\ntest('b2', () => expect(1).toBe(2))")
  file('c.test.ts', "test('c1', () => { console.log(' 99 pass'); console.error(' 98 fail') })\ntest('c2', () => {})")
  file('d.test.ts', "test('d1', async () => { await Bun.sleep(50); expect('x').toBe('y') })\ntest('d2', () => {})")
  return dir
}

async function bunTest(dir: string, flags: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, FORCE_COLOR: '1' }
  delete env.BUN_TEST_WORKER_ID // this file itself runs in a worker of the runner's bun test
  const proc = Bun.spawn([process.execPath, 'test', ...flags], { cwd: dir, env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { output: `${out}\n${err}`, code }
}

describe("the runner's totals", () => {
  test("are bun test's own under --parallel, with coloured output, and equal to a serial run's", async () => {
    const dir = fixtureSuite()
    const parallel = await bunTest(dir, ['--parallel=3', '--no-isolate'])
    expect(parallel.output).toContain('PARALLEL')
    expect(parallel.code).not.toBe(0)
    expect(bunTotals(parallel.output)).toEqual({ passed: 6, failed: 2, skipped: 0, errors: 0 })
    const serial = await bunTest(dir, [])
    expect(bunTotals(serial.output)).toEqual(bunTotals(parallel.output))
    expect(failedTests(parallel.output).sort()).toEqual(['b2', 'd1'])
  }, 60_000)

  test('of a file run in a bun test process of its own beside the others (the fuzzer in a full run) count it, and its failure', async () => {
    const dir = fixtureSuite()
    // As scripts/test.ts splits a full run: the main process ignores the file by its path, the other runs only it.
    const [main, alongside] = await Promise.all([
      bunTest(dir, ['--parallel=3', '--no-isolate', '--path-ignore-patterns=d.test.ts']),
      bunTest(dir, ['./d.test.ts']),
    ])
    expect(bunTotals(main.output)).toEqual({ passed: 5, failed: 1, skipped: 0, errors: 0 })
    expect(bunTotals(alongside.output)).toEqual({ passed: 1, failed: 1, skipped: 0, errors: 0 })
    expect(alongside.code).not.toBe(0)
    const serial = await bunTest(dir, [])
    expect(sumTotals(main.output, alongside.output)).toEqual(bunTotals(serial.output))
    expect(failedTests(alongside.output)).toEqual(['d1'])
  }, 60_000)

  test("name each failed test with why, from bun's JUnit report, describe blocks included", async () => {
    const dir = fixtureSuite()
    writeFileSync(
      join(dir, 'e.test.ts'),
      "import { describe, test } from 'bun:test'\n" +
        "describe('outer', () => describe('inner', () => test('e1 & <x>', () => { throw new Error('boom\\nsecond line') })))\n",
    )
    const report = join(dir, 'junit.xml')
    await bunTest(dir, ['--parallel=3', '--no-isolate', '--reporter=junit', `--reporter-outfile=${report}`])
    expect(junitFailures(readFileSync(report, 'utf8')).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'b2', error: ['expect(received).toBe(expected)', 'Expected: 2', 'Received: 1'] },
      { name: 'd1', error: ['expect(received).toBe(expected)', 'Expected: "y"', 'Received: "x"'] },
      { name: 'outer > inner > e1 & <x>', error: ['boom', 'second line'] },
    ])
  }, 60_000)

  test('say how many were skipped, each by name and with its reason where known; a todo is not a skip', async () => {
    const dir = fixtureSuite()
    writeFileSync(
      join(dir, 's.test.ts'),
      "import { describe, test } from 'bun:test'\n" +
        "test.skipIf(true)('s1', () => {})\ndescribe('outer', () => test.skip('s2', () => {}))\ntest.todo('t1')\n",
    )
    const report = join(dir, 'junit.xml')
    const run = await bunTest(dir, ['--parallel=3', '--no-isolate', '--reporter=junit', `--reporter-outfile=${report}`])
    const totals = bunTotals(run.output)
    expect(totals).toEqual({ passed: 6, failed: 2, skipped: 2, errors: 0 })
    const skipped = junitSkipped(readFileSync(report, 'utf8')).sort((a, b) => a.name.localeCompare(b.name))
    expect(skipped).toEqual([
      { file: 's.test.ts', name: 'outer > s2' },
      { file: 's.test.ts', name: 's1' },
    ])
    expect(skippedLine(totals.skipped, skipped)).toBe('tests skipped: 2 (s.test.ts > outer > s2: no reason on record; s.test.ts > s1: no reason on record)')
    expect(skippedLine(0, [])).toBe('tests skipped: 0')
    expect(skippedLine(2, skipped.slice(0, 1))).toBe('tests skipped: 2 (s.test.ts > outer > s2: no reason on record; 1 not named (no JUnit report))')
    // The suite's own skip says why: the runner's report names files from the checkout's root.
    const known = 'test/platform/private-checkout.test.ts'
    expect(skippedLine(1, [{ file: known, name: 'x' }])).toBe(`tests skipped: 1 (${known} > x: ${SKIP_REASONS[known]})`)
    expect(await Bun.file(known).exists()).toBe(true)
  }, 60_000)
})
