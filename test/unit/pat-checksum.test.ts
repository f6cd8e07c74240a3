import { describe, expect, test } from 'bun:test'
import { isWellFormedPat, newPat, PAT_PREFIX } from '../../api/identity/tokens'

// Checksums computed with the hand-written CRC-32 this module had before it used the runtime's: tokens already
// issued must stay well formed.
// The second body's CRC has its top bit set, where a signed/unsigned slip would show.
const ISSUED = [
  { body: 'rcpTestBody0123456789abcdefXYZ', checksum: '18vZIr' },
  { body: 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', checksum: '4IlJEz' },
  { body: '000000000000000000000000000000', checksum: '2C8GjS' },
]

describe('PAT checksum', () => {
  test('tokens issued before keep their checksum', () => {
    for (const { body, checksum } of ISSUED) {
      expect({ body, ok: isWellFormedPat(`${PAT_PREFIX}${body}${checksum}`) }).toEqual({ body, ok: true })
      const other = checksum.slice(0, 5) + (checksum[5] === 'a' ? 'b' : 'a')
      expect({ body, ok: isWellFormedPat(`${PAT_PREFIX}${body}${other}`) }).toEqual({ body, ok: false })
    }
  })

  test('new tokens carry a checksum the offline check accepts', () => {
    for (let i = 0; i < 50; i++) expect(isWellFormedPat(newPat().token)).toBe(true)
  })
})
