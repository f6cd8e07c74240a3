// ETags and If-Match (api/platform/etag.ts) without a server: the tag is the row version, and If-Match accepts one
// strong tag of ours or `*`, nothing else. The routes' use of them is test/http/etag.test.ts.
import { describe, expect, test } from 'bun:test'
import { etagOf, expectedVersion, parseIfMatch } from '../../api/platform/etag'
import { thrownCode as code } from './support/thrown-code'

describe('If-Match', () => {
  test('our own tag round-trips to its version; * accepts any; absent is no condition', () => {
    for (const v of [1, 42, 9_007_199_254_740_991]) expect(expectedVersion(parseIfMatch(etagOf(v)))).toBe(v)
    expect(parseIfMatch(` ${etagOf(7)} `)).toEqual({ kind: 'version', version: 7 })
    expect(parseIfMatch('*')).toEqual({ kind: 'any' })
    expect(expectedVersion(parseIfMatch('*'))).toBeNull()
    expect([parseIfMatch(undefined), parseIfMatch(null)]).toEqual([undefined, undefined])
  })

  test('weak, unquoted, listed, zero, padded or foreign tags are IF_MATCH_INVALID', () => {
    for (const bad of ['W/"v1"', 'v1', '"v1", "v2"', '"v0"', '"v01"', '"1"', '"va"', '', '"v12345678901234567"']) {
      expect({ bad, code: code(() => parseIfMatch(bad)) }).toEqual({ bad, code: 'IF_MATCH_INVALID' })
    }
  })
})
