import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApi, type TestApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner } from '../support/fixtures'

// A password sign-in is argon2id plus its round trips to Postgres, and every round trip costs the API and Postgres
// CPU that the hashing then lacks (bench/sign-in.ts). What the sign-in reads of the account (the user, the
// memberships, the second factors, the landing tenant's policy) is read once and handed on to the session and to
// the answer; before, the same rows were read two or three times over.
describe('password sign-in round trips', () => {
  let api: TestApi
  let recording: string[] | undefined
  beforeAll(async () => {
    // The sealer's own statements are not the sign-in's.
    api = await startApi({ AUDIT_SEAL_INTERVAL_MS: '60000' }, { onQuery: (text) => recording?.push(text.replace(/\s+/g, ' ').trim()) })
  })
  afterAll(() => api.stop())

  test('into a tenant: nine statements at most (the transaction included), none of them twice', async () => {
    const owner = await tenantOwner(api.url)
    const client = new Client(api.url)
    recording = []
    const res = await client.post('/sessions', { email: owner.email, password: PASSWORD })
    const sent = recording.filter((q) => !q.startsWith('select pg_notify'))
    recording = undefined
    expect(res.status).toBe(201)
    expect(res.json.data.currentMembership.id).toBe(owner.membershipId)
    expect(res.json.data.session.state).toBe('active')
    expect(res.json.data.memberships).toHaveLength(1)

    const twice = sent.filter((q, i) => q !== 'begin' && q !== 'commit' && sent.indexOf(q) !== i)
    expect(twice).toEqual([])
    expect(sent.length).toBeLessThanOrEqual(9)
  })
})
