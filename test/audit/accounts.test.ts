// The account's own trail: sign-ins and their failures, second factors, password and profile changes, resets and
// sessions, each in the account's chain (never a tenant's), shown in the user's security activity, and never holding
// a secret the flow created.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, signedUpUser, tenantOwner, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { codeAt, enrolTotp, signIn } from '../mfa/helpers'
import { codeFrom, mailTo, memberOf, NEW_PASSWORD, tokenFrom } from '../accounts/helpers'
import { auditWindow, sealAudit } from '../support/audit'

// Request ids whose password reset finished its background work (the route's debug line).
const settledResets = new Set<string>()
const api = useApi(
  {},
  {
    onLog: (line) => {
      if (line.msg === 'password reset request settled') settledResets.add(String(line.requestId))
    },
  },
)
const anon = () => new Client(api.url)
let n = 0
const requestId = (tag: string) => `req-${tag}-${Date.now().toString(36)}-${++n}`

interface Row {
  chain: string
  tenant_id: string | null
  subject_user_id: string | null
  actor_type: string
  actor_id: string | null
  action: string
  target_type: string | null
  target_id: string | null
  outcome: string
  reason: string | null
  request_id: string | null
  changes: Record<string, { before: unknown; after: unknown }> | null
  details: Record<string, unknown> | null
}

/** Every entry about the user or by them, oldest first. */
const entriesOf = async (userId: string) =>
  sealAudit(api.sql).then(
    () => api.sql<Row[]>`
  select * from audit_log where subject_user_id = ${userId} or actor_id = ${userId} order by occurred_at, seq`,
  )
const byRequest = async (id: string) => sealAudit(api.sql).then(() => api.sql<Row[]>`select * from audit_log where request_id = ${id}`)
const actions = (rows: Row[]) => rows.map((r) => `${r.action}:${r.outcome}`)
/** The stored form of every entry about the user, as one string to search for secrets. */
const storedJson = async (userId: string) =>
  JSON.stringify(
    await sealAudit(api.sql).then(() => api.sql`select to_jsonb(a) as e from audit_log a where subject_user_id = ${userId} or actor_id = ${userId}`),
  )
function sessionToken(c: Client): string {
  const token = c.cookie?.split('=')[1]
  if (!token) throw new Error('this client holds no session cookie')
  return token
}

/** A code that is neither this step's nor the last one's. */
async function wrongCode(secret: string) {
  const taken = new Set([await codeAt(secret, 0), await codeAt(secret, 1)])
  for (let i = 0; ; i++) if (!taken.has(String(i).padStart(6, '0'))) return String(i).padStart(6, '0')
}

describe('sign-in', () => {
  test('a password sign-in is recorded for the account; a wrong password as a failure with its reason and never the password', async () => {
    const owner = await tenantOwner(api.url)
    const typed = `not my password ${Date.now()}`
    const wrongId = requestId('wrong')
    expect((await anon().call('POST', '/sessions', { body: { email: owner.email, password: typed }, headers: { 'x-request-id': wrongId } })).status).toBe(401)
    const client = new Client(api.url)
    const ok = await client.call('POST', '/sessions', { body: { email: owner.email, password: PASSWORD }, headers: { 'user-agent': 'accounts-test/1.0' } })
    expect(ok.status).toBe(201)

    const [failed] = await byRequest(wrongId)
    expect(failed).toMatchObject({
      action: 'user.sign_in_failed',
      outcome: 'failure',
      reason: 'invalid_credentials',
      tenant_id: null,
      chain: owner.userId,
      subject_user_id: owner.userId,
      actor_type: 'anonymous',
      actor_id: null,
      target_type: 'user',
      target_id: owner.userId,
      details: { method: 'password' },
    })
    const [signedIn] = (await entriesOf(owner.userId)).filter((r) => r.action === 'user.signed_in' && r.target_id === ok.json.data.session.id)
    expect(signedIn).toMatchObject({
      outcome: 'success',
      tenant_id: null,
      subject_user_id: owner.userId,
      actor_type: 'user',
      actor_id: owner.userId,
      target_type: 'session',
      details: { method: 'password', membershipId: owner.membershipId, state: 'active' },
    })
    const stored = await storedJson(owner.userId)
    expect(stored).not.toContain(typed)
    expect(stored).not.toContain(PASSWORD)

    // The account's own activity shows both; the tenant's log shows neither.
    const activity = (await client.get('/users/me/security-activity')).json.data as {
      action: string
      outcome: string
      reason: string | null
      userAgent: string | null
    }[]
    expect(activity).toContainEqual(expect.objectContaining({ action: 'user.sign_in_failed', outcome: 'failure', reason: 'invalid_credentials' }))
    expect(activity).toContainEqual(expect.objectContaining({ action: 'user.signed_in', outcome: 'success', userAgent: 'accounts-test/1.0' }))
    const tenantLog = await client.get(`/tenants/current/audit-log?${auditWindow()}&action=user.`)
    expect(tenantLog.status).toBe(200)
    expect(tenantLog.json.data).toEqual([])
  })

  test("an unknown address: a failure with no subject and no address, in no tenant's log and not in the attacker's activity", async () => {
    const attacker = await tenantOwner(api.url)
    const ghost = uniqueEmail('ghost')
    const id = requestId('ghost')
    const res = await attacker.client.call('POST', '/sessions', { body: { email: ghost, password: 'whatever it is' }, headers: { 'x-request-id': id } })
    expect(res.status).toBe(401)
    const rows = await byRequest(id)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      action: 'user.sign_in_failed',
      reason: 'invalid_credentials',
      chain: 'anonymous',
      tenant_id: null,
      subject_user_id: null,
      actor_type: 'anonymous',
      actor_id: null,
      target_id: null,
    })
    await sealAudit(api.sql)
    const stored = JSON.stringify(await api.sql`select to_jsonb(a) as e from audit_log a where request_id = ${id}`)
    expect(stored).not.toContain(ghost.split('@')[0]!)
    expect(stored).not.toContain('whatever it is')
    expect(JSON.stringify((await attacker.client.get(`/tenants/current/audit-log?${auditWindow()}`)).json.data)).not.toContain(id)
    expect(JSON.stringify((await attacker.client.get('/users/me/security-activity')).json.data)).not.toContain(id)
    expect((await api.sql`select 1 from audit_log where action = 'user.sign_in_failed' and tenant_id is not null`).length).toBe(0)
  })

  test('the right password of a disabled account is refused as not_active, not as a wrong password', async () => {
    const { userId, email } = await signedUpUser(api.url)
    await api.sql`update users set status = 'disabled' where id = ${userId}`
    const id = requestId('disabled')
    expect((await anon().call('POST', '/sessions', { body: { email, password: PASSWORD }, headers: { 'x-request-id': id } })).status).toBe(401)
    expect((await byRequest(id))[0]).toMatchObject({ action: 'user.sign_in_failed', reason: 'not_active', subject_user_id: userId })
  })
})

describe('second factor', () => {
  test('TOTP enrolled, a challenge failed then passed, TOTP removed; neither the secret nor a code is in any entry', async () => {
    const u = await signedUpUser(api.url)
    const { secret, recoveryCodes } = await enrolTotp(u.client)
    const { client, session } = await signIn(api.url, u.email)
    expect(session.state).toBe('mfa_required')
    const wrong = await wrongCode(secret)
    const confirm = (code: string) => client.post('/sessions/mfa-challenges/confirmations', { challengeId: session.mfaChallenge.id, method: 'totp', code })
    expect((await confirm(wrong)).status).toBe(401)
    const right = await codeAt(secret)
    expect((await confirm(right)).status).toBe(201)
    const removal = await client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: recoveryCodes[0] } })
    expect(removal.status).toBe(200)

    const rows = await entriesOf(u.userId)
    const mine = rows.filter((r) => r.action.startsWith('user.totp') || r.action.startsWith('user.mfa'))
    expect(actions(mine)).toEqual([
      'user.totp_enrolled:success',
      'user.mfa_challenge_failed:failure',
      'user.mfa_challenge_passed:success',
      'user.totp_removed:success',
    ])
    const [enrolled, failed, passed, removed] = mine
    expect(enrolled).toMatchObject({ actor_type: 'user', actor_id: u.userId, tenant_id: null, target_id: u.userId })
    expect(failed).toMatchObject({
      actor_type: 'anonymous',
      subject_user_id: u.userId,
      reason: 'invalid_code',
      target_type: 'session',
      target_id: session.id,
      details: { method: 'totp' },
    })
    expect(passed).toMatchObject({ actor_type: 'user', actor_id: u.userId, target_type: 'session', target_id: session.id })
    expect(removed).toMatchObject({ actor_id: u.userId, details: { method: 'recovery_code' } })

    const stored = await storedJson(u.userId)
    for (const s of [secret, wrong, right, sessionToken(client), sessionToken(u.client), ...recoveryCodes, ...recoveryCodes.map((c) => c.replace(/-/g, ''))]) {
      expect({ s, found: stored.includes(s) }).toEqual({ s, found: false })
    }
    const activity = (await client.get('/users/me/security-activity')).json.data as { action: string }[]
    for (const a of ['user.totp_enrolled', 'user.mfa_challenge_failed', 'user.mfa_challenge_passed', 'user.totp_removed']) {
      expect(activity.map((e) => e.action)).toContain(a)
    }
  })

  test('a wrong code to remove TOTP is recorded as a refused removal, and the factor stays', async () => {
    const u = await signedUpUser(api.url)
    const { secret } = await enrolTotp(u.client)
    const wrong = await wrongCode(secret)
    expect((await u.client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: wrong } })).status).toBe(400)
    const removals = (await entriesOf(u.userId)).filter((r) => r.action === 'user.totp_removed')
    expect(removals).toEqual([expect.objectContaining({ outcome: 'failure', reason: 'invalid_code' })])
    expect((await u.client.get('/users/me/mfa')).json.data.totp.status).toBe('active')
  })
})

describe('account changes', () => {
  test('profile: the display name before and after; password: a wrong current one refused, then changed, other sessions ended', async () => {
    const u = await tenantOwner(api.url)
    expect((await u.client.patch('/users/me', { displayName: 'Ada' })).status).toBe(200)
    expect((await u.client.patch('/users/me', { displayName: 'Ada Lovelace' })).status).toBe(200)
    const other = await signIn(api.url, u.email)
    expect((await u.client.patch('/users/me/password', { currentPassword: 'a wrong guess here', newPassword: NEW_PASSWORD })).status).toBe(400)
    expect((await u.client.patch('/users/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, endOtherSessions: true })).status).toBe(200)

    const rows = await entriesOf(u.userId)
    expect(rows.filter((r) => r.action === 'user.profile_updated').map((r) => r.changes)).toEqual([
      { displayName: { before: null, after: 'Ada' } },
      { displayName: { before: 'Ada', after: 'Ada Lovelace' } },
    ])
    const changes = rows.filter((r) => r.action === 'user.password_changed')
    expect(changes).toEqual([
      expect.objectContaining({ outcome: 'failure', reason: 'invalid_credentials', actor_id: u.userId }),
      expect.objectContaining({ outcome: 'success', actor_id: u.userId, details: { firstPassword: false, otherSessionsEnded: 1 } }),
    ])
    const stored = await storedJson(u.userId)
    for (const s of [PASSWORD, NEW_PASSWORD, 'a wrong guess here', sessionToken(other.client)])
      expect({ s, found: stored.includes(s) }).toEqual({ s, found: false })
  })

  test("the entry is written in the change's own transaction: when it cannot be written, the password does not change", async () => {
    const u = await tenantOwner(api.url)
    const id = requestId('refused')
    // A trigger that refuses this one request's entry, nothing else's.
    await api.sql.unsafe(`create or replace function test_refuse_audit() returns trigger language plpgsql as $$
      begin raise exception 'refused by the test'; end $$`)
    await api.sql.unsafe(`create trigger test_refuse_audit before insert on audit_inbox for each row
      when (new.request_id = '${id}') execute function test_refuse_audit()`)
    try {
      const res = await u.client.call('PATCH', '/users/me/password', {
        body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
        headers: { 'x-request-id': id },
      })
      expect(res.status).toBe(500)
    } finally {
      await api.sql.unsafe('drop trigger test_refuse_audit on audit_inbox')
    }
    expect((await anon().post('/sessions', { email: u.email, password: PASSWORD })).status).toBe(201)
    expect((await anon().post('/sessions', { email: u.email, password: NEW_PASSWORD })).status).toBe(401)
    expect((await byRequest(id)).length).toBe(0)
  })
})

describe('sessions', () => {
  test('one session ended, the others ended, all ended, and a switch of membership, each with its count or target', async () => {
    const owner = await tenantOwner(api.url)
    const second = await owner.client.post('/tenants', { name: 'Second', slug: uniqueSlug() })
    expect(second.status).toBe(201)
    const switched = await owner.client.post('/sessions/current-membership-switches', { membershipId: owner.membershipId })
    expect(switched.status).toBe(201)

    const [a, b, c] = await Promise.all([1, 2, 3].map(() => signIn(api.url, owner.email)))
    const tokens = [owner.client, a!.client, b!.client, c!.client].map(sessionToken) // before sign-out clears the cookies
    expect((await owner.client.delete(`/sessions/${a!.session.id}`)).status).toBe(204)
    expect((await b!.client.delete('/sessions/current')).status).toBe(204)
    const foreign = await signIn(api.url, (await signedUpUser(api.url)).email)
    expect((await owner.client.delete(`/sessions/${foreign.session.id}`)).status).toBe(404) // not theirs: nothing ended, nothing recorded
    const others = await owner.client.post('/users/me/other-session-invalidation-requests')
    expect(others.json.data.invalidated).toBe(1) // c
    const all = await owner.client.post('/sessions/bulk-invalidation-requests')
    expect(all.json.data.invalidated).toBe(1) // this one

    const rows = await entriesOf(owner.userId)
    const switchedRow = rows.find((r) => r.action === 'session.tenant_switched')
    expect(switchedRow).toMatchObject({
      tenant_id: null,
      actor_id: owner.userId,
      target_type: 'membership',
      target_id: owner.membershipId,
      details: { tenantId: owner.tenantId, fromMembershipId: second.json.data.membership.id },
    })
    const ended = rows.filter((r) => r.action === 'session.ended')
    expect(ended.map((r) => [r.target_id, r.details?.current])).toEqual([
      [a!.session.id, false],
      [b!.session.id, true],
    ])
    expect(rows.filter((r) => r.action === 'session.others_ended').map((r) => r.details)).toEqual([{ count: 1 }])
    expect(rows.filter((r) => r.action === 'session.all_ended').map((r) => r.details)).toEqual([{ count: 1 }])
    expect(rows.filter((r) => r.action.startsWith('session.')).every((r) => r.tenant_id === null)).toBe(true)
    const stored = await storedJson(owner.userId)
    for (const s of tokens) expect({ s, found: stored.includes(s) }).toEqual({ s, found: false })
    const activity = (await (await signIn(api.url, owner.email)).client.get('/users/me/security-activity')).json.data as { action: string }[]
    for (const a of ['session.tenant_switched', 'session.ended', 'session.others_ended', 'session.all_ended'])
      expect(activity.map((e) => e.action)).toContain(a)
  })
})

describe('password reset', () => {
  test('requested and completed by the user: the token and code are in no entry; an unknown address records nothing', async () => {
    const u = await signedUpUser(api.url)
    const since = new Date(Date.now() - 1000)
    const known = await anon().post('/password-resets', { email: u.email })
    const ghostId = requestId('ghost-reset')
    const unknown = await anon().call('POST', '/password-resets', { body: { email: uniqueEmail('ghost') }, headers: { 'x-request-id': ghostId } })
    expect([known.status, known.json.data]).toEqual([unknown.status, unknown.json.data])
    const mail = await mailTo(u.email, { subject: /Reset your/, after: since })
    const confirmed = await anon().post('/password-resets/confirmations', { token: tokenFrom(mail.text), newPassword: NEW_PASSWORD })
    expect(confirmed.status).toBe(201)

    while (!settledResets.has(ghostId)) await Bun.sleep(20) // the unknown address's background lookup is over
    expect((await byRequest(ghostId)).length).toBe(0)
    const rows = (await entriesOf(u.userId)).filter((r) => r.action.startsWith('user.password_reset'))
    expect(rows).toEqual([
      expect.objectContaining({
        action: 'user.password_reset_requested',
        actor_type: 'anonymous',
        subject_user_id: u.userId,
        details: { via: 'self_service' },
      }),
      expect.objectContaining({
        action: 'user.password_reset_completed',
        actor_type: 'user',
        actor_id: u.userId,
        details: { grant: 'reset', with: 'link', sessionsEnded: 1 },
      }),
    ])
    const stored = await storedJson(u.userId)
    for (const s of [tokenFrom(mail.text), codeFrom(mail.text), NEW_PASSWORD]) expect({ s, found: stored.includes(s) }).toEqual({ s, found: false })
  })

  test('requested by an administrator: the admin is the actor, the member the subject; the account entry stays out of the tenant log, its twin is in it', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, owner.client, 'viewer')
    const res = await owner.client.post(`/users/${member.userId}/password-reset-requests`)
    expect(res.status).toBe(202)
    const [row] = (await entriesOf(member.userId)).filter((r) => r.action === 'user.password_reset_requested')
    expect(row).toMatchObject({
      actor_type: 'user',
      actor_id: owner.userId,
      subject_user_id: member.userId,
      chain: member.userId,
      tenant_id: null,
      details: { via: 'administrator', tenantId: owner.tenantId },
    })
    const activity = (await member.client.get('/users/me/security-activity')).json.data as { action: string; actor: { id: string } }[]
    expect(activity).toContainEqual(expect.objectContaining({ action: 'user.password_reset_requested', actor: expect.objectContaining({ id: owner.userId }) }))
    expect((await owner.client.get(`/tenants/current/audit-log?${auditWindow()}&action=user.password`)).json.data).toEqual([])
    // The tenant's other managers see that one of them sent a member a reset, about the membership, without the
    // member's other tenants.
    const twin = (await owner.client.get(`/tenants/current/audit-log?${auditWindow()}&action=membership.password_reset`)).json.data
    expect(twin).toEqual([
      expect.objectContaining({
        action: 'membership.password_reset_requested',
        tenantId: owner.tenantId,
        actor: expect.objectContaining({ type: 'user', id: owner.userId }),
        target: { type: 'membership', id: member.membershipId },
        outcome: 'success',
      }),
    ])
  })
})
