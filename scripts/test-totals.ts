import { XMLParser } from 'fast-xml-parser'

/** bun test's own totals: the last ` N pass` / ` N fail` / ` N skip` / ` N error(s)` lines of its output (stdout and
 *  stderr together), never a count of ours. The same lines end a serial run and a `--parallel` one, whose coordinator
 *  prints the summary of every worker's files. */
export function bunTotals(output: string): { passed: number; failed: number; skipped: number; errors: number } {
  const text = output.replace(/\x1b\[[0-9;]*m/g, '')
  const last = (word: string) => {
    const all = [...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, 'gm'))]
    return all.length > 0 ? Number(all.at(-1)![1]) : 0
  }
  return { passed: last('pass'), failed: last('fail'), skipped: last('skip'), errors: last('errors?') }
}

/** The totals of bun test processes run side by side over disjoint sets of files (the runner's main process and the one
 *  it starts alongside): each process's own, summed. */
export function sumTotals(...outputs: string[]): ReturnType<typeof bunTotals> {
  const sum = { passed: 0, failed: 0, skipped: 0, errors: 0 }
  for (const t of outputs.map(bunTotals)) for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += t[k]
  return sum
}

/** The names of the failed tests, once each, from the output: bun lists them (`(fail) name`, or `✗ name` in colour)
 *  as they fail and again in its closing summary. What the runner falls back on when bun wrote no JUnit report (it
 *  was killed); why each failed comes from the report, as bun's parallel output interleaves a worker's errors. */
export function failedTests(output: string): string[] {
  const text = output.replace(/\x1b\[[0-9;]*m/g, '')
  return [...new Set([...text.matchAll(/^(?:\(fail\)|✗) (.+?)(?: \[[\d.]+m?s\])?\s*$/gm)].map((m) => m[1]!))]
}

export interface FailedTest {
  /** As bun prints it: the describe blocks and the test, joined by ` > `. */
  name: string
  /** The failure's message, its first lines (bun's Expected/Received), each cut to 400 characters. */
  error: string[]
}

type Message = { '@_message'?: string }
interface Case {
  '@_name': string
  failure?: Message[]
  skipped?: (Message | '')[]
}
interface Suite {
  '@_name': string
  testsuite?: Suite[]
  testcase?: Case[]
}

/** Every test case of bun's JUnit report (`--reporter=junit`) with its file and its name. A file's suite is its path,
 *  not part of a test's name; nested suites are its describe blocks. */
function junitCases(xml: string): { file: string; name: string; c: Case }[] {
  const parsed = new XMLParser({
    ignoreAttributes: false,
    htmlEntities: true,
    isArray: (tag) => ['testsuite', 'testcase', 'failure', 'skipped'].includes(tag),
  }).parse(xml)
  const out: { file: string; name: string; c: Case }[] = []
  const walk = (file: string, suite: Suite, path: string[]) => {
    for (const c of suite.testcase ?? []) out.push({ file, name: [...path, c['@_name']].join(' > '), c })
    for (const s of suite.testsuite ?? []) walk(file, s, [...path, s['@_name']])
  }
  for (const file of (parsed.testsuites?.testsuite ?? []) as Suite[]) walk(file['@_name'], file, [])
  return out
}

/** The failed tests of bun's JUnit report, with their messages: the CI page's tail names each failure and why. */
export function junitFailures(xml: string): FailedTest[] {
  return junitCases(xml)
    .filter(({ c }) => c.failure?.[0])
    .map(({ name, c }) => ({ name, error: messageLines(c.failure![0]!['@_message'] ?? '') }))
}

export interface SkippedTest {
  file: string
  name: string
}

/** The skipped tests of bun's JUnit report (test.skip, test.skipIf); a test.todo is reported apart by bun, not here. */
export function junitSkipped(xml: string): SkippedTest[] {
  const isTodo = (m: Message | '') => typeof m === 'object' && m['@_message'] === 'TODO'
  return junitCases(xml)
    .filter(({ c }) => c.skipped?.length && !c.skipped.some(isTodo))
    .map(({ file, name }) => ({ file, name }))
}

/** Why a test of the suite skips, by its file: the closing lines say it, so no skip passes unseen. */
export const SKIP_REASONS: Record<string, string> = {
  'test/platform/private-checkout.test.ts': 'runs only as root, the user whose private home it reproduces',
}

/** The line before the totals: bun's own count of skipped tests, each named with its reason where it is known. */
export function skippedLine(count: number, skipped: SkippedTest[]): string {
  if (count === 0) return 'tests skipped: 0'
  const named = skipped.map((t) => `${t.file} > ${t.name}: ${SKIP_REASONS[t.file] ?? 'no reason on record'}`)
  if (named.length < count) named.push(`${count - named.length} not named (no JUnit report)`)
  return `tests skipped: ${count} (${named.join('; ')})`
}

const messageLines = (message: string) =>
  message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 10)
    .map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l))
