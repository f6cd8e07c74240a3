import { XMLParser } from 'fast-xml-parser'

/** bun test's own totals: the last ` N pass` / ` N fail` / ` N error(s)` lines of its output (stdout and stderr
 *  together), never a count of ours. The same lines end a serial run and a `--parallel` one, whose coordinator prints
 *  the summary of every worker's files. */
export function bunTotals(output: string): { passed: number; failed: number; errors: number } {
  const text = output.replace(/\x1b\[[0-9;]*m/g, '')
  const last = (word: string) => {
    const all = [...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, 'gm'))]
    return all.length > 0 ? Number(all.at(-1)![1]) : 0
  }
  return { passed: last('pass'), failed: last('fail'), errors: last('errors?') }
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

interface Suite { '@_name': string; testsuite?: Suite[]; testcase?: { '@_name': string; failure?: { '@_message'?: string }[] }[] }

/** The failed tests of bun's JUnit report (`--reporter=junit`), with their messages: the CI page's tail names each
 *  failure and why. A file's suite is its path, not part of a test's name; nested suites are its describe blocks. */
export function junitFailures(xml: string): FailedTest[] {
  const parsed = new XMLParser({ ignoreAttributes: false, htmlEntities: true, isArray: (tag) => ['testsuite', 'testcase', 'failure'].includes(tag) }).parse(xml)
  const out: FailedTest[] = []
  const walk = (suite: Suite, path: string[]) => {
    for (const c of suite.testcase ?? []) {
      const failure = c.failure?.[0]
      if (failure) out.push({ name: [...path, c['@_name']].join(' > '), error: messageLines(failure['@_message'] ?? '') })
    }
    for (const s of suite.testsuite ?? []) walk(s, [...path, s['@_name']])
  }
  for (const file of (parsed.testsuites?.testsuite ?? []) as Suite[]) walk(file, [])
  return out
}

const messageLines = (message: string) =>
  message.split('\n').map((l) => l.trim()).filter(Boolean).slice(0, 10).map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l))
