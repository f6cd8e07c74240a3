/** The first line where a committed generated file differs from what the generator makes now, or null: toBe on
 *  800 KB would print both. */
export function firstDifference(committed: string, generated: string): { line: number; committed?: string; generated?: string } | null {
  const a = committed.split('\n')
  const b = generated.split('\n')
  const at = a.findIndex((line, i) => line !== b[i])
  if (at === -1 && a.length === b.length) return null
  const line = at === -1 ? a.length : at
  return { line: line + 1, committed: a[line], generated: b[line] }
}
