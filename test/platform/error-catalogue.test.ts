import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ADDITIVE_SETS, ErrorSets, STATUS_OF } from '../../api/platform/errors'

// The published interface sits beside the repository (../shared/spec), as in CI.
const SPEC = join(import.meta.dir, '..', '..', '..', 'shared', 'spec', 'published-interface.md')

const CODE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b(?:UNAUTHORIZED|FORBIDDEN|PRECONDITION_FAILED)\b/g
const codesIn = (text: string) => text.match(CODE) ?? []
// The table names two sets by their status alone.
const TABLE_NAME: Record<string, string> = { 412: 'P412', 429: 'R429' }

/** The published Errors table: per set, the codes it always holds, and those the A400 row adds for the /users family. */
async function publishedSets(): Promise<Record<string, { always: string[]; onlyForUsers: string[] }>> {
  const text = await Bun.file(SPEC).text()
  const section = text.slice(text.indexOf('| Set | Status | Codes |'), text.indexOf('Rules:', text.indexOf('| Set | Status | Codes |')))
  const sets: Record<string, { always: string[]; onlyForUsers: string[] }> = {}
  for (const row of section.split('\n').filter((l) => /^\| [A-Z0-9]+[a-z]* \| \d{3} \|/.test(l))) {
    const [, name, , cell] = row.split('|').map((c) => c.trim()) as [string, string, string, string]
    const base = /^([A-Z0-9]+[a-z]*) plus /.exec(cell)?.[1]
    const [own, users = ''] = cell.split(/(?=Operations on \/users)/)
    sets[name] = base
      ? { always: [...sets[base]!.always, ...codesIn(cell)], onlyForUsers: sets[base]!.onlyForUsers }
      : { always: codesIn(own!), onlyForUsers: codesIn(users) }
  }
  return sets
}

describe('error catalogue', () => {
  test("every code in the published Errors table is in the catalogue with that row's status", async () => {
    const text = await Bun.file(SPEC).text()
    const section = text.slice(text.indexOf('| Set | Status | Codes |'), text.indexOf('Rules:', text.indexOf('| Set | Status | Codes |')))
    const rows = section.split('\n').filter((l) => /^\| [A-Z0-9]+[a-z]* \| \d{3} \|/.test(l))
    expect(rows.length).toBeGreaterThanOrEqual(20)
    let checked = 0
    for (const row of rows) {
      const [, , status, codes] = row.split('|').map((c) => c.trim())
      for (const code of codes!.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b(?:UNAUTHORIZED|FORBIDDEN|PRECONDITION_FAILED)\b/g) ?? []) {
        expect({ code, status: STATUS_OF[code as keyof typeof STATUS_OF] }).toEqual({ code, status: Number(status) })
        checked++
      }
    }
    expect(checked).toBeGreaterThan(100)
  })

  test('the invitation-acceptance codes listed outside the table are in the catalogue', async () => {
    const expected = {
      INVITATION_EXPIRED: 400,
      INVITATION_INVALID: 400,
      INVITATION_ALREADY_ACCEPTED: 409,
      INVITATION_EMAIL_MISMATCH: 409,
      INVITATION_REVOKED: 409,
    }
    for (const [code, status] of Object.entries(expected)) expect(STATUS_OF[code as keyof typeof STATUS_OF]).toBe(status)
  })

  test('sets that extend others contain them', () => {
    for (const c of ErrorSets.A400) expect(ErrorSets.A400p as readonly string[]).toContain(c)
    for (const c of ErrorSets.A409s) expect(ErrorSets.A409i as readonly string[]).toContain(c)
    for (const c of ErrorSets.T400) expect(ErrorSets.T400p as readonly string[]).toContain(c)
    expect(ErrorSets.A404r as readonly string[]).toContain('RESOURCE_NOT_FOUND')
  })

  // The catalogue builds sets from each other, so the checks above hold by construction; this one compares every
  // set with its own row of the published table, where "X plus …" rows name their base.
  test('every set holds exactly the codes of its published row', async () => {
    const published = await publishedSets()
    const catalogue = ErrorSets as Record<string, readonly string[]>
    const named = Object.keys(published).map((name) => TABLE_NAME[name] ?? name)
    expect(
      Object.keys(catalogue)
        .filter((n) => !named.includes(n) && !ADDITIVE_SETS.includes(n))
        .sort(),
    ).toEqual(['A400s', 'X405', 'X431', 'X5XX'])
    for (const [name, { always, onlyForUsers }] of Object.entries(published)) {
      const set = TABLE_NAME[name] ?? name
      const codes = [...catalogue[set]!].sort()
      const extras = codes.filter((c) => onlyForUsers.includes(c))
      // The /users-family codes of the A400 row come with every set built on it, or with none.
      const expected = [...always, ...(extras.length > 0 ? onlyForUsers : [])].sort()
      expect({ set, codes }).toEqual({ set, codes: expected })
    }
    // A400s is A400 outside the /users family: the row without the sentence about that family.
    expect([...(ErrorSets.A400s as readonly string[])].sort()).toEqual([...published.A400!.always].sort())
  })
})
