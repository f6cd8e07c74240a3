// The device authorization grant (RFC 8628) over real HTTP: the hostile cases first (a guessed user code, a code used
// twice, an expired one, a tenant the approver is not in, a device polling too fast, a token trying to approve, scopes
// the approver lacks), then the path that ends in a PAT holding exactly the approved scopes.
import { describe, expect, test } from 'bun:test'
import { startApi, useApi } from '../support/api'
import { Client } from '../support/client'
import { patFor, signedUpUser, tenantOwner } from '../support/fixtures'
import { sealAudit } from '../support/audit'
import { memberOf } from '../tenancy/members'
import { createDb } from '../../api/platform/db'

const ENTRIES = 4
const api = useApi({ RATE_LIMIT_DEVICE_CODE_ENTRIES_PER_MINUTE: String(ENTRIES), RATE_LIMIT_DEVICE_AUTHORIZATIONS_PER_MINUTE: '1000' })

const device = () => new Client(api.url)

async function start(scopes = ['tenant:read', 'model:read'], clientName = 'rcp on build-host-3') {
  const res = await device().post('/device/authorizations', { clientName, scopes })
  expect(res.status).toBe(201)
  return res.json.data as {
    deviceCode: string
    userCode: string
    verificationUri: string
    verificationUriComplete: string
    expiresIn: number
    interval: number
  }
}

const poll = (deviceCode: string) => device().post('/device/tokens', { deviceCode })

/** Lets the next poll come after the interval without waiting for it: the previous poll is moved into the past. */
const pollLater = async (deviceCode: string) => {
  await api.sql`update device_authorizations set last_polled_at = last_polled_at - interval '1 hour' where last_polled_at is not null
                and device_code_hash = sha256(convert_to('device:' || ${deviceCode}, 'UTF8'))`
  return poll(deviceCode)
}

const approve = (c: Client, userCode: string, tenantId: string) => c.post('/device/authorizations/approve', { userCode, tenantId })

describe('device authorization: hostile cases', () => {
  test('guessing user codes is refused after a few misses, even when the right code follows', async () => {
    const owner = await tenantOwner(api.url)
    const { userCode, deviceCode } = await start()
    for (let i = 0; i < ENTRIES; i++) {
      const res = await owner.client.get(`/device/authorizations/lookup?userCode=BCDF-GHJ${'LMNP'[i]}`)
      expect(res.status).toBe(404)
      expect(res.json.code).toBe('NOT_FOUND')
    }
    const refused = await owner.client.get(`/device/authorizations/lookup?userCode=${userCode}`)
    expect(refused.status).toBe(429)
    expect(refused.json.code).toBe('RATE_LIMITED')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('ratelimit-limit')).toBe(String(ENTRIES))
    // Approving is the same guess: refused too, and nothing was approved.
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(429)
    expect((await poll(deviceCode)).json.error).toBe('authorization_pending')
    // Another user's budget is their own.
    const other = await tenantOwner(api.url)
    expect((await other.client.get(`/device/authorizations/lookup?userCode=${userCode}`)).status).toBe(200)
  })

  test('guesses fired in parallel get no more comparisons than the budget (each takes its token before the comparison)', async () => {
    const user = await signedUpUser(api.url)
    const guesses = await Promise.all(
      Array.from({ length: 24 }, (_, i) => user.client.get(`/device/authorizations/lookup?userCode=BCDF-GH${'JKLMNPQRSTVWXZ'[i % 14]}${'BCDF'[i % 4]}`)),
    )
    const compared = guesses.filter((r) => r.status === 404).length
    expect(guesses.filter((r) => r.status === 429).length + compared).toBe(24)
    // The bucket refills at ENTRIES a minute: while the burst runs at most one more token can come back.
    expect(compared).toBeGreaterThanOrEqual(ENTRIES)
    expect(compared).toBeLessThanOrEqual(ENTRIES + 1)
  })

  test('a user code is single use: after approval it answers nothing, and the token is answered once', async () => {
    const owner = await tenantOwner(api.url)
    const { userCode, deviceCode } = await start(['tenant:read'])
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(200)
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(404)
    expect((await owner.client.post('/device/authorizations/deny', { userCode })).status).toBe(404)
    expect((await owner.client.get(`/device/authorizations/lookup?userCode=${userCode}`)).status).toBe(404)
    const first = await poll(deviceCode)
    expect(first.status).toBe(200)
    const again = await pollLater(deviceCode)
    expect(again.status).toBe(400)
    expect(again.json).toMatchObject({ code: 'DEVICE_CODE_EXPIRED', error: 'expired_token' })
    expect(again.text).not.toContain(first.json.data.token)
  })

  test('polls racing after approval: exactly one receives the token', async () => {
    const owner = await tenantOwner(api.url)
    const { userCode, deviceCode } = await start(['tenant:read'])
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(200)
    const polls = await Promise.all(Array.from({ length: 10 }, () => poll(deviceCode)))
    expect(polls.filter((r) => r.status === 200).length).toBe(1)
    for (const r of polls.filter((r) => r.status !== 200)) expect(r.json.code).toBe('DEVICE_CODE_EXPIRED')
    const [row] = await api.sql<{ n: number }[]>`
      select count(*)::int as n from api_keys where user_id = ${owner.userId} and name = 'rcp on build-host-3 (device sign-in)'`
    expect(row!.n).toBe(1)
  })

  test('an expired authorization can be neither looked up, approved nor collected', async () => {
    const owner = await tenantOwner(api.url)
    const { userCode, deviceCode } = await start()
    await api.sql`update device_authorizations set expires_at = now() - interval '1 second'
                   where device_code_hash = sha256(convert_to('device:' || ${deviceCode}, 'UTF8'))`
    expect((await owner.client.get(`/device/authorizations/lookup?userCode=${userCode}`)).status).toBe(404)
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(404)
    const res = await poll(deviceCode)
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ code: 'DEVICE_CODE_EXPIRED', error: 'expired_token' })
    // An approval that expires before the device collects it gives no token either.
    const late = await start()
    expect((await approve(owner.client, late.userCode, owner.tenantId)).status).toBe(200)
    await api.sql`update device_authorizations set expires_at = now() - interval '1 second'
                   where device_code_hash = sha256(convert_to('device:' || ${late.deviceCode}, 'UTF8'))`
    expect((await poll(late.deviceCode)).json.code).toBe('DEVICE_CODE_EXPIRED')
  })

  test('an unknown device code is expired_token', async () => {
    const res = await poll('not-a-device-code')
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ code: 'DEVICE_CODE_EXPIRED', error: 'expired_token' })
    expect(res.headers.get('content-type')).toContain('application/problem+json')
  })

  test('a member of another tenant cannot approve for a tenant they do not belong to: 404, and nothing is approved', async () => {
    const victim = await tenantOwner(api.url)
    const outsider = await tenantOwner(api.url)
    const { userCode, deviceCode } = await start()
    const res = await approve(outsider.client, userCode, victim.tenantId)
    expect(res.status).toBe(404)
    expect(res.json.code).toBe('TENANT_NOT_FOUND')
    // A tenant id that exists nowhere answers the same.
    expect((await approve(outsider.client, userCode, crypto.randomUUID())).json.code).toBe('TENANT_NOT_FOUND')
    expect((await poll(deviceCode)).json.code).toBe('DEVICE_AUTHORIZATION_PENDING')
  })

  test('a device polling faster than the interval is told slow_down, and the interval grows by 5 s each time', async () => {
    const { deviceCode, interval } = await start()
    expect(interval).toBe(5)
    const first = await poll(deviceCode)
    expect(first.json).toMatchObject({ code: 'DEVICE_AUTHORIZATION_PENDING', error: 'authorization_pending' })
    const fast = await poll(deviceCode)
    expect(fast.status).toBe(400)
    expect(fast.json).toMatchObject({ code: 'DEVICE_SLOW_DOWN', error: 'slow_down' })
    expect((await poll(deviceCode)).json.code).toBe('DEVICE_SLOW_DOWN')
    const [row] = await api.sql<{ interval_seconds: number }[]>`
      select interval_seconds from device_authorizations where device_code_hash = sha256(convert_to('device:' || ${deviceCode}, 'UTF8'))`
    expect(row!.interval_seconds).toBe(15)
    // A poll that waited the grown interval is pending again, not slowed.
    expect((await pollLater(deviceCode)).json.code).toBe('DEVICE_AUTHORIZATION_PENDING')
  })

  test('a personal access token cannot look up, approve or deny', async () => {
    const owner = await tenantOwner(api.url)
    const pat = await patFor(owner.client, ['tenant:read', 'apikey:write'])
    const withToken = new Client(api.url).withBearer(pat.token)
    const { userCode, deviceCode } = await start(['tenant:read'])
    for (const res of [
      await withToken.get(`/device/authorizations/lookup?userCode=${userCode}`),
      await approve(withToken, userCode, owner.tenantId),
      await withToken.post('/device/authorizations/deny', { userCode }),
    ]) {
      expect(res.status).toBe(403)
      expect(res.json.code).toBe('FORBIDDEN')
    }
    expect((await poll(deviceCode)).json.code).toBe('DEVICE_AUTHORIZATION_PENDING')
  })

  test('scopes the approver does not hold in that tenant are refused', async () => {
    const owner = await tenantOwner(api.url)
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const { userCode, deviceCode } = await start(['tenant:read', 'apikey:manage'])
    const res = await approve(viewer.client, userCode, owner.tenantId)
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('INVALID_PERMISSION_OVERLAY')
    expect(res.json.message).toContain('apikey:manage')
    expect((await poll(deviceCode)).json.code).toBe('DEVICE_AUTHORIZATION_PENDING')
  })

  test('a disabled membership cannot approve', async () => {
    const owner = await tenantOwner(api.url)
    const other = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, other.tenantId, 'admin')
    await api.sql`update memberships set status = 'disabled' where id = ${member.membershipId}`
    const { userCode } = await start(['tenant:read'])
    const res = await approve(member.client, userCode, other.tenantId)
    expect(res.status).toBe(403)
    expect(res.json.code).toBe('MEMBERSHIP_DISABLED')
    expect(owner.tenantId).not.toBe(other.tenantId)
  })

  test('a tenant that is offboarding gets no new device token: the approval is refused by the new-work gate', async () => {
    const owner = await tenantOwner(api.url)
    const other = await tenantOwner(api.url)
    await api.sql`update tenants set lifecycle = 'offboarding' where id = ${other.tenantId}`
    const { userCode, deviceCode } = await start(['tenant:read'])
    // The service judges the tenant approved for (the macro's gate sees only the session's current tenant).
    const res = await approve(other.client, userCode, other.tenantId)
    expect(res.status).toBe(409)
    expect(res.json.code).toBe('TENANT_OFFBOARDING')
    expect((await poll(deviceCode)).json.code).toBe('DEVICE_AUTHORIZATION_PENDING')
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(200)
  })

  test('bad bodies are 400 problems, never 5xx', async () => {
    for (const body of [
      {},
      { clientName: '', scopes: ['tenant:read'] },
      { clientName: 'x', scopes: [] },
      { clientName: 'x', scopes: ['root'] },
      { clientName: 'x'.repeat(65), scopes: ['tenant:read'] },
    ]) {
      const res = await device().post('/device/authorizations', body)
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('VALIDATION_ERROR')
    }
    expect((await device().post('/device/tokens', {})).json.code).toBe('VALIDATION_ERROR')
  })
})

// The token is minted when the device collects it, up to 10 minutes after the approval: the approval's conditions are
// judged again then, and what no longer holds refuses the collection for good.
describe('device authorization: what changed between approval and collection', () => {
  const minted = async (userId: string) =>
    (await api.sql<{ n: number }[]>`select count(*)::int as n from api_keys where user_id = ${userId} and name like '% (device sign-in)'`)[0]!.n

  /** An admin of a fresh tenant approves a device for it; the device has not collected yet. */
  async function approvedByAdmin(scopes = ['tenant:read']) {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const { userCode, deviceCode } = await start(scopes)
    expect((await approve(admin.client, userCode, owner.tenantId)).status).toBe(200)
    return { owner, admin, deviceCode }
  }

  async function expectRefusedForGood(deviceCode: string, userId: string, reason: string) {
    const res = await poll(deviceCode)
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ code: 'DEVICE_ACCESS_DENIED', error: 'access_denied' })
    expect(res.text).not.toContain('rcp_pat_')
    expect(await minted(userId)).toBe(0)
    await sealAudit(api.sql)
    const [entry] = await api.sql<{ details: { reason: string } }[]>`
      select a.details from audit_log a join device_authorizations d on a.target_id = d.id::text
       where a.action = 'device_authorization.refused' and d.device_code_hash = sha256(convert_to('device:' || ${deviceCode}, 'UTF8'))`
    expect(entry!.details.reason).toBe(reason)
    // Refused for good: the next poll is told the same, and still nothing is minted.
    expect((await pollLater(deviceCode)).json.code).toBe('DEVICE_ACCESS_DENIED')
    expect(await minted(userId)).toBe(0)
  }

  test('the approver removed from the tenant meanwhile: access_denied, no token', async () => {
    const { owner, admin, deviceCode } = await approvedByAdmin()
    expect((await owner.client.delete(`/tenants/current/memberships/${admin.membershipId}`)).status).toBeLessThan(300)
    await expectRefusedForGood(deviceCode, admin.userId, 'membership_not_active')
  })

  test("the approver's membership disabled meanwhile: access_denied, no token", async () => {
    const { owner, admin, deviceCode } = await approvedByAdmin()
    expect((await owner.client.patch(`/tenants/current/memberships/${admin.membershipId}`, { status: 'disabled' })).status).toBe(200)
    await expectRefusedForGood(deviceCode, admin.userId, 'membership_not_active')
  })

  test("the approver's membership expired meanwhile: access_denied, no token", async () => {
    const { admin, deviceCode } = await approvedByAdmin()
    await api.sql`update memberships set expires_at = now() - interval '1 second' where id = ${admin.membershipId}`
    await expectRefusedForGood(deviceCode, admin.userId, 'membership_not_active')
  })

  test('the approver demoted below the scopes asked for: access_denied; a demotion that still gives them mints the token', async () => {
    const { owner, admin, deviceCode } = await approvedByAdmin(['tenant:read', 'apikey:manage'])
    expect((await owner.client.patch(`/tenants/current/memberships/${admin.membershipId}`, { role: 'viewer' })).status).toBe(200)
    await expectRefusedForGood(deviceCode, admin.userId, 'scopes_beyond_role')

    const kept = await approvedByAdmin(['tenant:read'])
    expect((await kept.owner.client.patch(`/tenants/current/memberships/${kept.admin.membershipId}`, { role: 'viewer' })).status).toBe(200)
    const res = await poll(kept.deviceCode)
    expect(res.status).toBe(200)
    expect(res.json.data.scopes).toEqual(['tenant:read'])
  })

  test('a membership change committing while the device collects: the collection waits for it, then is refused', async () => {
    const { owner, admin, deviceCode } = await approvedByAdmin()
    const holder = createDb(api.deps.config.DATABASE_URL, { max: 1 })
    let release = () => {}
    const released = new Promise<void>((r) => {
      release = r
    })
    let changed = () => {}
    const isChanged = new Promise<void>((r) => {
      changed = r
    })
    let holderPid = 0
    // As a membership change does: the tenant's row, then the membership, committed only once the poll waits.
    const held = holder.begin(async (tx) => {
      holderPid = (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid
      await tx`select 1 from tenants where id = ${owner.tenantId} for no key update`
      await tx`update memberships set status = 'disabled' where id = ${admin.membershipId}`
      changed()
      await released
    })
    try {
      await isChanged
      let answered = false
      const collecting = poll(deviceCode).finally(() => {
        answered = true
      })
      const blocked = async () => (await api.sql`select 1 from pg_stat_activity where ${holderPid} = any(pg_blocking_pids(pid))`).length > 0
      while (!answered && !(await blocked())) await Bun.sleep(20)
      expect(answered).toBe(false)
      release()
      await held
      expect((await collecting).json.code).toBe('DEVICE_ACCESS_DENIED')
      expect(await minted(admin.userId)).toBe(0)
    } finally {
      release()
      await held
      await holder.end()
    }
  })

  test('the tenant started offboarding meanwhile: access_denied, no token', async () => {
    const owner = await tenantOwner(api.url)
    const { userCode, deviceCode } = await start(['tenant:read'])
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(200)
    await api.sql`update tenants set lifecycle = 'offboarding' where id = ${owner.tenantId}`
    await expectRefusedForGood(deviceCode, owner.userId, 'tenant_offboarding')
  })

  test('the tenant was billing-blocked meanwhile: access_denied, no token', async () => {
    const owner = await tenantOwner(api.url)
    const { userCode, deviceCode } = await start(['tenant:read'])
    expect((await approve(owner.client, userCode, owner.tenantId)).status).toBe(200)
    expect((await owner.client.patch('/tenants/current/subscription', { status: 'paused' }, { 'if-match': '"v1"' })).status).toBe(200)
    await expectRefusedForGood(deviceCode, owner.userId, 'tenant_billing_blocked')
  })
})

describe('device authorization: budgets per address', () => {
  test('new authorizations are budgeted per client address', async () => {
    const s = await startApi({ RATE_LIMIT_DEVICE_AUTHORIZATIONS_PER_MINUTE: '2' })
    try {
      const ask = () => new Client(s.url).post('/device/authorizations', { clientName: 'rcp', scopes: ['tenant:read'] })
      expect((await ask()).status).toBe(201)
      expect((await ask()).status).toBe(201)
      const refused = await ask()
      expect(refused.status).toBe(429)
      expect(refused.headers.get('ratelimit-limit')).toBe('2')
    } finally {
      await s.stop()
    }
  })
})

describe('device authorization: the person approves, the device gets its token', () => {
  test('approve for a tenant: the device receives a PAT with exactly the scopes asked for, listed and audited as any PAT', async () => {
    const owner = await tenantOwner(api.url)
    // The approver acts in another tenant now: the approval names the tenant, not the session's.
    const second = await owner.client.post('/tenants', { name: 'Second', slug: `second-${crypto.randomUUID().slice(0, 8)}` })
    expect(second.status).toBe(201)
    const started = await start(['tenant:read', 'model:read'])
    expect(started.userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(Buffer.from(started.deviceCode, 'base64url').length).toBeGreaterThanOrEqual(16)
    expect(started.expiresIn).toBe(600)
    expect(new URL(started.verificationUri).pathname).toBe('/console/device')
    expect(new URL(started.verificationUriComplete).searchParams.get('user_code')).toBe(started.userCode)
    const page = await fetch(new URL('/console/device', api.url))
    expect(page.status).not.toBe(404)

    // Typed as a person would: lower case, without the dash, with spaces.
    const typed = ` ${started.userCode.toLowerCase().replace('-', ' ')} `
    const looked = await owner.client.get(`/device/authorizations/lookup?userCode=${encodeURIComponent(typed)}`)
    expect(looked.status).toBe(200)
    expect(looked.json.data).toMatchObject({ clientName: 'rcp on build-host-3', scopes: ['tenant:read', 'model:read'] })
    expect(looked.json.data.clientAddress).toBeString()

    const approved = await approve(owner.client, started.userCode.replace('-', ''), owner.tenantId)
    expect(approved.status).toBe(200)
    expect(approved.json.data).toMatchObject({ status: 'approved', tenantId: owner.tenantId, scopes: ['tenant:read', 'model:read'] })

    const res = await poll(started.deviceCode)
    expect(res.status).toBe(200)
    const { token, tokenType, tenantId, scopes, expiresAt } = res.json.data
    expect(tokenType).toBe('Bearer')
    expect(tenantId).toBe(owner.tenantId)
    expect(scopes).toEqual(['tenant:read', 'model:read'])
    const days = (Date.parse(expiresAt) - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(89)
    expect(days).toBeLessThanOrEqual(90)

    const self = await new Client(api.url).withBearer(token).get('/tokens/self')
    expect(self.status).toBe(200)
    expect(self.json.data).toMatchObject({ tenantId: owner.tenantId, userId: owner.userId, credentialClass: 'personal_access_token' })
    expect([...self.json.data.grantCeiling].sort()).toEqual(['model:read', 'tenant:read'])
    expect([...self.json.data.effectivePermissions].sort()).toEqual(['model:read', 'tenant:read'])
    // Exactly those: a scope the owner holds but did not approve is not declared.
    const beyond = await new Client(api.url).withBearer(token).get('/api-keys')
    expect(beyond.status).toBe(403)

    // An ordinary PAT: in the owner's list of that tenant, and in its audit log with the approval.
    const switched = await owner.client.post(
      '/sessions/current-membership-switches',
      { membershipId: await membershipIn(owner.userId, owner.tenantId) },
      { 'idempotency-key': crypto.randomUUID() },
    )
    expect(switched.status).toBe(201)
    const listed = (await owner.client.get('/api-keys')).json.data
    expect(listed.map((k: { name: string }) => k.name)).toContain('rcp on build-host-3 (device sign-in)')
    await sealAudit(api.sql)
    const rows = await api.sql<{ action: string; actor_id: string; details: Record<string, unknown> }[]>`
      select action, actor_id, details from audit_log where tenant_id = ${owner.tenantId}`
    const actions = rows.map((r) => r.action)
    expect(actions).toContain('device_authorization.approved')
    expect(actions).toContain('api_key.created')
    for (const r of rows.filter((r) => r.action.startsWith('device_authorization') || r.action === 'api_key.created')) expect(r.actor_id).toBe(owner.userId)
    expect(JSON.stringify(rows)).not.toContain(token)
    expect(JSON.stringify(rows)).not.toContain(started.userCode)
  })

  test('deny: the device is told access_denied, and the denial is in the account trail', async () => {
    const user = await signedUpUser(api.url)
    const { userCode, deviceCode } = await start()
    const res = await user.client.post('/device/authorizations/deny', { userCode })
    expect(res.status).toBe(200)
    expect(res.json.data.status).toBe('denied')
    const polled = await poll(deviceCode)
    expect(polled.status).toBe(400)
    expect(polled.json).toMatchObject({ code: 'DEVICE_ACCESS_DENIED', error: 'access_denied' })
    await sealAudit(api.sql)
    const rows = await api.sql<{ action: string }[]>`select action from audit_log where subject_user_id = ${user.userId}`
    expect(rows.map((r) => r.action)).toContain('device_authorization.denied')
  })

  test('neither code is stored: only digests', async () => {
    const { userCode, deviceCode } = await start()
    const rows = await api.sql`select * from device_authorizations where device_code_hash = sha256(convert_to('device:' || ${deviceCode}, 'UTF8'))`
    expect(rows.length).toBe(1)
    const dump = JSON.stringify(rows, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('utf8') : v))
    expect(dump).not.toContain(deviceCode)
    expect(dump).not.toContain(userCode.replace('-', ''))
  })
})

async function membershipIn(userId: string, tenantId: string): Promise<string> {
  const [m] = await api.sql<{ id: string }[]>`select id from memberships where user_id = ${userId} and tenant_id = ${tenantId}`
  return m!.id
}
