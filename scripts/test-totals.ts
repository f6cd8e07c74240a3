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

/** The names of the failed tests, once each: bun lists them (`(fail) name`, or `✗ name` in colour) as they fail and
 *  again in its closing summary. The runner repeats them after the worker's log, so a reader of the output's last
 *  lines (a CI page) sees which ones failed. */
export function failedTests(output: string): string[] {
  const text = output.replace(/\x1b\[[0-9;]*m/g, '')
  return [...new Set([...text.matchAll(/^(?:\(fail\)|✗) (.+?)(?: \[[\d.]+m?s\])?\s*$/gm)].map((m) => m[1]!))]
}
