import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner } from '../support/fixtures'

const api = useApi()

async function ownerWithSessions(count: number) {
  const owner = await tenantOwner(api.url)
  for (let i = 0; i < count; i++) await new Client(api.url).post('/sessions', { email: owner.email, password: PASSWORD })
  return owner
}

describe('keyset pagination with opaque tokens', () => {
  test('walks every item exactly once, newest first, and omits the token at the end', async () => {
    const { client } = await ownerWithSessions(6) // plus the registration session: 7
    const seen: string[] = []
    let token: string | undefined
    let pages = 0
    do {
      const res = await client.get(`/users/me/sessions?pageSize=3${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)
      expect(res.status).toBe(200)
      expect(res.json.meta.pageSize).toBe(3)
      seen.push(...res.json.data.map((s: any) => s.id))
      token = res.json.nextPageToken
      pages++
    } while (token)
    expect(pages).toBe(3)
    expect(new Set(seen).size).toBe(7)
    const all = await client.get('/users/me/sessions')
    expect(all.json.meta.pageSize).toBe(25)
    expect(all.json.nextPageToken).toBeUndefined()
    expect(all.json.data.map((s: any) => s.id)).toEqual(seen)
    expect(all.json.data.filter((s: any) => s.current).length).toBe(1)
  })

  test('page size limits: over 100 is PAGE_SIZE_TOO_LARGE, 0 is a validation error', async () => {
    const { client } = await tenantOwner(api.url)
    const big = await client.get('/users/me/sessions?pageSize=101')
    expect(big.status).toBe(400)
    expect(big.json.code).toBe('PAGE_SIZE_TOO_LARGE')
    expect((await client.get('/users/me/sessions?pageSize=100')).status).toBe(200)
    const zero = await client.get('/users/me/sessions?pageSize=0')
    expect(zero.json.code).toBe('VALIDATION_ERROR')
  })

  test('tampered or foreign tokens are refused', async () => {
    const a = await ownerWithSessions(3)
    const b = await ownerWithSessions(0)
    const first = await a.client.get('/users/me/sessions?pageSize=2')
    const token: string = first.json.nextPageToken
    const [payload, mac] = token.split('.')
    const forged = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(payload!, 'base64url').toString()),
        c: { createdAt: '2100-01-01T00:00:00.000000Z', id: '00000000-0000-0000-0000-000000000000' },
      }),
    ).toString('base64url')
    for (const bad of [`${forged}.${mac}`, 'garbage', `${payload}.`, `${token}x`]) {
      const res = await a.client.get(`/users/me/sessions?pageSize=2&pageToken=${encodeURIComponent(bad)}`)
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('PAGE_TOKEN_INVALID')
    }
    // Bound to the query that made it: another caller's listing is a different query.
    const foreign = await b.client.get(`/users/me/sessions?pageToken=${encodeURIComponent(token)}`)
    expect(foreign.status).toBe(400)
    expect(foreign.json.code).toBe('PAGE_TOKEN_QUERY_MISMATCH')
  })
})
