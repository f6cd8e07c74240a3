// Page tokens (api/platform/pagination.ts) without a server: opaque, tamper-evident, bound to the query that made
// them, and still open after a key rotation until the old key leaves the ring. The routes' use of them is
// test/http/pagination.test.ts.
import { describe, expect, test } from 'bun:test'
import { deriveKeys } from '../../api/platform/keyring'
import { openPage, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, pageTokenFor } from '../../api/platform/pagination'
import { newSecretKey } from '../../scripts/env'
import { thrownCode as code } from './support/thrown-code'

const [oldKey, newKey] = [newSecretKey(), newSecretKey()]
const key = deriveKeys(oldKey)
const binding = { route: 'GET /x', scope: 'tenant:1', filters: { status: 'active', q: 'ada' } }

describe('page tokens', () => {
  test('open to the cursor they were made with, whatever the order of the filters', () => {
    const token = pageTokenFor(key, binding, { id: 'x', at: 3 })
    expect(openPage(key, { ...binding, filters: { q: 'ada', status: 'active' } }, 10, token)).toEqual({ size: 10, after: { id: 'x', at: 3 } })
  })

  test('a token used with different filters, route or scope is PAGE_TOKEN_QUERY_MISMATCH', () => {
    const token = pageTokenFor(key, binding, { id: 'x' })
    expect(code(() => openPage(key, { ...binding, filters: { status: 'disabled', q: 'ada' } }, 10, token))).toBe('PAGE_TOKEN_QUERY_MISMATCH')
    expect(code(() => openPage(key, { ...binding, route: 'GET /y' }, 10, token))).toBe('PAGE_TOKEN_QUERY_MISMATCH')
    expect(code(() => openPage(key, { ...binding, scope: 'tenant:2' }, 10, token))).toBe('PAGE_TOKEN_QUERY_MISMATCH')
  })

  test('a changed byte, another key, or a malformed token is PAGE_TOKEN_INVALID', () => {
    const token = pageTokenFor(key, binding, { id: 'x' })
    const [payload, mac] = token.split('.') as [string, string]
    const forged = Buffer.from(JSON.stringify({ q: JSON.parse(Buffer.from(payload, 'base64url').toString()).q, c: { id: 'y' } })).toString('base64url')
    expect(code(() => openPage(key, binding, 10, `${forged}.${mac}`))).toBe('PAGE_TOKEN_INVALID')
    expect(code(() => openPage(deriveKeys(newSecretKey()), binding, 10, token))).toBe('PAGE_TOKEN_INVALID')
    for (const bad of ['', 'abc', `${token}.x`, `${payload}.`]) expect(code(() => openPage(key, binding, 10, bad))).toBe('PAGE_TOKEN_INVALID')
  })

  test('a token of the previous key still opens after a rotation, and no longer once that key is removed', () => {
    const token = pageTokenFor(key, binding, { id: 'x' })
    expect(openPage(deriveKeys(`${newKey},${oldKey}`), binding, 10, token).after).toEqual({ id: 'x' })
    expect(code(() => openPage(deriveKeys(newKey), binding, 10, token))).toBe('PAGE_TOKEN_INVALID')
  })

  test('page size: the default, the maximum, and over it PAGE_SIZE_TOO_LARGE', () => {
    expect(openPage(key, binding, undefined, undefined)).toEqual({ size: PAGE_SIZE_DEFAULT, after: null })
    expect(openPage(key, binding, PAGE_SIZE_MAX, undefined).size).toBe(PAGE_SIZE_MAX)
    expect(code(() => openPage(key, binding, PAGE_SIZE_MAX + 1, undefined))).toBe('PAGE_SIZE_TOO_LARGE')
  })
})
