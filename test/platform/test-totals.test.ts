// `./scripts/test` ends with bun test's own totals (scripts/test-totals.ts). The runner starts bun test with
// `--parallel`, whose coordinator prints the files' results as its workers send them: the totals read from that output
// are the ones bun counted, the same as a serial run of the same files gives.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bunTotals, failedTests, junitFailures } from '../../scripts/test-totals'

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
  test('are bun test\'s own under --parallel, with coloured output, and equal to a serial run\'s', async () => {
    const dir = fixtureSuite()
    const parallel = await bunTest(dir, ['--parallel=3', '--no-isolate'])
    expect(parallel.output).toContain('PARALLEL')
    expect(parallel.code).not.toBe(0)
    expect(bunTotals(parallel.output)).toEqual({ passed: 6, failed: 2, errors: 0 })
    const serial = await bunTest(dir, [])
    expect(bunTotals(serial.output)).toEqual(bunTotals(parallel.output))
    expect(failedTests(parallel.output).sort()).toEqual(['b2', 'd1'])
  }, 60_000)

  test("name each failed test with why, from bun's JUnit report, describe blocks included", async () => {
    const dir = fixtureSuite()
    writeFileSync(join(dir, 'e.test.ts'), "import { describe, test } from 'bun:test'\n" +
      "describe('outer', () => describe('inner', () => test('e1 & <x>', () => { throw new Error('boom\\nsecond line') })))\n")
    const report = join(dir, 'junit.xml')
    await bunTest(dir, ['--parallel=3', '--no-isolate', '--reporter=junit', `--reporter-outfile=${report}`])
    expect(junitFailures(readFileSync(report, 'utf8')).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'b2', error: ['expect(received).toBe(expected)', 'Expected: 2', 'Received: 1'] },
      { name: 'd1', error: ['expect(received).toBe(expected)', 'Expected: "y"', 'Received: "x"'] },
      { name: 'outer > inner > e1 & <x>', error: ['boom', 'second line'] },
    ])
  }, 60_000)
})
