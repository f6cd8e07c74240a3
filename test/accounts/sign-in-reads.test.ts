import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApi, type TestApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { enrolTotp } from '../mfa/helpers'

// A password sign-in is argon2id plus its round trips to Postgres, and every round trip costs the API and Postgres
// CPU that the hashing then lacks (bench/sign-in.ts). The sign-in reads the account with everything the landing,
// the session and the answer need in one statement, and writes the session, its challenge and its audit entry in
// another.
//
// How the round trips are counted: the driver's debug hook sees the text of every statement it sends, a transaction's
// BEGIN and COMMIT included. Each is counted as a round trip of its own, as if none were pipelined (several sent
// together would be fewer round trips, never more), so the count is an upper bound. The API's own background work
// (the credential feed's heartbeat, `select pg_notify`) is not the sign-in's; the sealer is held off below.
describe('password sign-in round trips', () => {
  let api: TestApi
  let recording: string[] | undefined
  beforeAll(async () => {
    // The sealer's own statements are not the sign-in's.
    api = await startApi({ AUDIT_SEAL_INTERVAL_MS: '60000' }, { onQuery: (text) => recording?.push(text.replace(/\s+/g, ' ').trim()) })
  })
  afterAll(() => api.stop())

  async function signInRecorded(email: string) {
    const client = new Client(api.url)
    recording = []
    const res = await client.post('/sessions', { email, password: PASSWORD })
    const sent = recording.filter((q) => !q.startsWith('select pg_notify'))
    recording = undefined
    return { res, sent }
  }

  // What is counted is the whole sign-in: its session and its audit entry are among the statements.
  const expectWrites = (sent: string[]) => {
    expect(sent.some((q) => q.includes('insert into sessions'))).toBe(true)
    expect(sent.some((q) => q.includes('audit_append'))).toBe(true)
  }

  test('into a tenant: three round trips at most, the audit entry and the session included', async () => {
    const owner = await tenantOwner(api.url)
    const { res, sent } = await signInRecorded(owner.email)
    expect(res.status).toBe(201)
    expect(res.json.data.currentMembership.id).toBe(owner.membershipId)
    expect(res.json.data.session.state).toBe('active')
    expect(res.json.data.memberships).toHaveLength(1)

    expectWrites(sent)
    expect(sent.length).toBeLessThanOrEqual(3)
  })

  test('with a second factor: the gated session and its challenge in the same three round trips', async () => {
    const owner = await tenantOwner(api.url)
    await enrolTotp(owner.client)
    const { res, sent } = await signInRecorded(owner.email)
    expect(res.status).toBe(201)
    expect(res.json.data.session.state).toBe('mfa_required')
    expect(res.json.data.session.mfaChallenge.methods).toEqual(['totp', 'recovery_code'])

    expectWrites(sent)
    expect(sent.some((q) => q.includes('insert into mfa_challenges'))).toBe(true)
    expect(sent.length).toBeLessThanOrEqual(3)
  })
})
