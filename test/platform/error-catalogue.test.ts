import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ErrorSets, STATUS_OF } from '../../api/platform/errors'

// The published interface sits beside the repository (../shared/spec), as in CI.
const SPEC = join(import.meta.dir, '..', '..', '..', 'shared', 'spec', 'published-interface.md')

describe('error catalogue', () => {
  test('every code in the published Errors table is in the catalogue with that row\'s status', async () => {
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
    const expected = { INVITATION_EXPIRED: 400, INVITATION_INVALID: 400, INVITATION_ALREADY_ACCEPTED: 409, INVITATION_EMAIL_MISMATCH: 409, INVITATION_REVOKED: 409 }
    for (const [code, status] of Object.entries(expected)) expect(STATUS_OF[code as keyof typeof STATUS_OF]).toBe(status)
  })

  test('sets that extend others contain them', () => {
    for (const c of ErrorSets.A400) expect(ErrorSets.A400p as readonly string[]).toContain(c)
    for (const c of ErrorSets.A409s) expect(ErrorSets.A409i as readonly string[]).toContain(c)
    for (const c of ErrorSets.T400) expect(ErrorSets.T400p as readonly string[]).toContain(c)
    expect(ErrorSets.A404r as readonly string[]).toContain('RESOURCE_NOT_FOUND')
  })
})
