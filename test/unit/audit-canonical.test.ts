// The audit chain's canonical form and link (api/audit/canonical.ts) without a server: the rules that make it equal
// PostgreSQL's jsonb text, stated one by one. That it equals what Postgres hashed, entry by entry, is
// test/audit/export.test.ts.
import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { canonicalOf, jsonbText, linkHash, type ExportLine } from '../../api/audit/canonical'

describe('jsonb text', () => {
  test('object keys go by UTF-8 length, then bytewise; items are joined by ", " and keys by ": "', () => {
    expect(jsonbText({ b: 1, aa: 2, a: [true, null, 'x"y'] })).toBe('{"a": [true, null, "x\\"y"], "b": 1, "aa": 2}')
    // é is two bytes: after every one-byte key, and after "ab" bytewise (0xC3 > 0x61).
    expect(jsonbText({ é: 1, z: 2, ab: 3 })).toBe('{"z": 2, "ab": 3, "é": 1}')
    expect(jsonbText({ nested: { y: {}, x: [] } })).toBe('{"nested": {"x": [], "y": {}}}')
  })

  test('numbers in plain decimal, never with an exponent', () => {
    expect([1e21, 1e-7, 1.5e-7, -2.5e25, 0.1, 42, -0].map(jsonbText)).toEqual([
      '1000000000000000000000',
      '0.0000001',
      '0.00000015',
      '-25000000000000000000000000',
      '0.1',
      '42',
      '0',
    ])
  })

  test('strings escaped as JSON.stringify escapes them; absent values are null', () => {
    expect(jsonbText('tab\there \u0001 ü')).toBe(JSON.stringify('tab\there \u0001 ü'))
    expect([jsonbText(undefined), jsonbText(null), jsonbText(false)]).toEqual(['null', 'null', 'false'])
  })
})

const line: ExportLine = {
  id: '0b0e6f1c-0000-4000-8000-000000000001',
  seq: 1,
  chain: 't1',
  occurredAt: '2026-01-01T00:00:00.000Z',
  occurredAtMicros: 1767225600000123,
  tenantId: 't1',
  subjectUserId: null,
  actor: { type: 'user', id: 'u1', label: 'ada@example.com', credentialId: null },
  action: 'user.updated',
  target: { type: 'user', id: 'u1' },
  outcome: 'success',
  reason: null,
  ip: '192.0.2.1',
  userAgent: 'ua',
  requestId: 'r1',
  changes: { name: { to: 'Ada', from: 'A' } },
  details: null,
  hash: '',
  prevHash: null,
}

describe('the chain', () => {
  test('the canonical form is the columns in table order, the hash left out', () => {
    expect(canonicalOf(line)).toBe(
      '["0b0e6f1c-0000-4000-8000-000000000001", "t1", 1, 1767225600000123, "t1", null, "user", "u1", "ada@example.com", null, "user.updated", ' +
        '"user", "u1", "success", null, "192.0.2.1", "ua", "r1", {"name": {"to": "Ada", "from": "A"}}, null]',
    )
    expect(canonicalOf({ ...line, hash: 'ff', prevHash: 'ee', occurredAt: 'other' })).toBe(canonicalOf(line))
  })

  test('a link is sha256 of the previous hash and the canonical form; a chain starts from 32 zero bytes', () => {
    const first = linkHash(null, line)
    expect(first).toBe(createHash('sha256').update(Buffer.alloc(32)).update(canonicalOf(line)).digest('hex'))
    const second = { ...line, seq: 2, prevHash: first }
    expect(linkHash(first, second)).toBe(createHash('sha256').update(Buffer.from(first, 'hex')).update(canonicalOf(second)).digest('hex'))
    // Any change of a covered column, or of the previous hash, is another link.
    expect(linkHash(null, { ...line, outcome: 'failure' })).not.toBe(first)
    expect(linkHash(`${'00'.repeat(31)}01`, line)).not.toBe(first)
  })
})
