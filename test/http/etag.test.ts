import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'

const api = useApi()

describe('ETag and If-Match on /users/me', () => {
  test('GET carries a strong ETag from the row version; a matching If-Match proceeds and returns the next one', async () => {
    const { client } = await tenantOwner(api.url)
    const got = await client.get('/users/me')
    const etag = got.headers.get('etag')!
    expect(etag).toMatch(/^"v\d+"$/)
    const patched = await client.patch('/users/me', { displayName: 'Ada' }, { 'if-match': etag })
    expect(patched.status).toBe(200)
    expect(patched.json.data.displayName).toBe('Ada')
    const next = patched.headers.get('etag')!
    expect(next).not.toBe(etag)
    expect((await client.get('/users/me')).headers.get('etag')).toBe(next)
  })

  test('a stale tag is 412 and writes nothing; * passes; a malformed tag is 400 IF_MATCH_INVALID', async () => {
    const { client, userId } = await tenantOwner(api.url)
    const etag = (await client.get('/users/me')).headers.get('etag')!
    expect((await client.patch('/users/me', { displayName: 'First' }, { 'if-match': etag })).status).toBe(200)
    const stale = await client.patch('/users/me', { displayName: 'Second' }, { 'if-match': etag })
    expect(stale.status).toBe(412)
    expect(stale.json.code).toBe('PRECONDITION_FAILED')
    const [row] = await api.sql`select display_name from users where id = ${userId}`
    expect(row!.display_name).toBe('First')
    expect((await client.patch('/users/me', { displayName: 'Star' }, { 'if-match': '*' })).status).toBe(200)
    for (const bad of ['v1', 'W/"v1"', '"abc"', '"v1", "v2"']) {
      const res = await client.patch('/users/me', { displayName: 'Nope' }, { 'if-match': bad })
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('IF_MATCH_INVALID')
    }
    expect((await client.patch('/users/me', { displayName: 'No header' })).status).toBe(200)
  })

  test('concurrent PATCHes with one ETag: exactly one succeeds', async () => {
    const { client, userId } = await tenantOwner(api.url)
    const etag = (await client.get('/users/me')).headers.get('etag')!
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => client.patch('/users/me', { displayName: `writer ${i}` }, { 'if-match': etag })))
    const winners = results.filter((r) => r.status === 200)
    expect(winners.length).toBe(1)
    expect(results.filter((r) => r.status === 412).length).toBe(19)
    const [row] = await api.sql`select display_name, version from users where id = ${userId}`
    expect(row!.display_name).toBe(winners[0]!.json.data.displayName)
    expect(`"v${row!.version}"`).toBe(winners[0]!.headers.get('etag')!)
  })
})
