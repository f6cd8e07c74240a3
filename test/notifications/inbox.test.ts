import { describe, expect, test } from 'bun:test'
import { notify } from '../../api/notifications/service'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { Client } from '../support/client'
import { PASSWORD, patFor, signedUpUser, tenantOwner } from '../support/fixtures'
import { enrolTotp } from '../mfa/helpers'

const api = useApi()

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0'

type User = Awaited<ReturnType<typeof signedUpUser>>

/** A notification of `user`, written as a domain writes one: notify() inside a transaction. */
async function note(user: { userId: string }, dedupeKey = crypto.randomUUID(), tenantId: string | null = null) {
  return api.sql.begin((tx) => notify(tx, api.deps.keys, { userId: user.userId, tenantId, kind: 'account.totp_removed', fields: {}, dedupeKey }))
}

const inbox = async (u: { client: Client }, q = '') => {
  const res = await u.client.get(`/users/me/notifications${q}`)
  expect(res.status).toBe(200)
  return res.json.data as { id: string; kind: string; state: string; tenantId: string | null; fields: Record<string, unknown>; text: string }[]
}
const counts = async (u: { client: Client }) => (await u.client.get('/users/me/notifications/count')).json.data as { unread: number; unseen: number }

async function signInFrom(email: string, userAgent: string) {
  const client = new Client(api.url)
  const res = await client.call('POST', '/sessions', { body: { email, password: PASSWORD }, headers: { 'user-agent': userAgent } })
  expect(res.status).toBe(201)
  return client
}

describe('the attacker: ids, tenants, credentials and odd input', () => {
  test("another user's notification id, an unknown id and a malformed one are the same 404, for every operation", async () => {
    const victim = await signedUpUser(api.url)
    const attacker = await signedUpUser(api.url)
    const n = (await note(victim))!
    for (const id of [n.id, crypto.randomUUID(), 'not-a-uuid', '00000000-0000-0000-0000-000000000000']) {
      for (const op of ['read', 'unread', 'archive']) {
        const res = await attacker.client.post(`/users/me/notifications/${encodeURIComponent(id)}/${op}`)
        expect([op, id, res.status, res.json.code]).toEqual([op, id, 404, 'USER_NOTIFICATION_NOT_FOUND'])
      }
      const all = await attacker.client.post('/users/me/notifications/read-all', { upTo: id })
      expect(all.status).toBe(id === 'not-a-uuid' ? 400 : 404)
    }
    // Nothing of the victim's changed, and the attacker's own inbox is empty.
    expect((await inbox(victim)).map((x) => [x.id, x.state])).toEqual([[n.id, 'unread']])
    expect(await counts(victim)).toEqual({ unread: 1, unseen: 0 })
    expect(await inbox(attacker)).toEqual([])
  })

  test("another tenant's admin sees none of a member's notifications about their tenant, by filter or by id", async () => {
    const a = await tenantOwner(api.url)
    const b = await tenantOwner(api.url)
    const n = (await note(a, undefined, a.tenantId))!
    expect(await inbox(b, `?tenantId=${a.tenantId}`)).toEqual([])
    expect((await b.client.post(`/users/me/notifications/${n.id}/archive`)).status).toBe(404)
    expect((await inbox(a, `?tenantId=${a.tenantId}`)).map((x) => x.id)).toEqual([n.id])
    expect(await inbox(a, `?tenantId=${b.tenantId}`)).toEqual([])
  })

  test('a personal access token cannot read the inbox (403): it belongs to one tenant, the inbox to the account', async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['tenant:read', 'apikey:read'])
    const pat = owner.client.withBearer(token)
    for (const path of ['/users/me/notifications', '/users/me/notifications/count', '/users/me/notification-preferences']) {
      const res = await pat.get(path)
      expect([path, res.status, res.json.code]).toEqual([path, 403, 'FORBIDDEN'])
    }
    expect((await new Client(api.url).get('/users/me/notifications')).status).toBe(401)
  })

  test('huge, forged or foreign page tokens and odd filters are 400, never 5xx', async () => {
    const u = await signedUpUser(api.url)
    for (let i = 0; i < 3; i++) await note(u)
    const first = await u.client.get('/users/me/notifications?pageSize=1')
    const token = first.json.nextPageToken as string
    expect(token).toBeString()
    const cases: [string, string][] = [
      [`?pageToken=${'A'.repeat(5000)}`, 'VALIDATION_ERROR'],
      ['?pageToken=abc.def', 'PAGE_TOKEN_INVALID'],
      [`?pageToken=${encodeURIComponent(`${token.split('.')[0]}x.${token.split('.')[1]}`)}`, 'PAGE_TOKEN_INVALID'],
      [`?state=unread&pageToken=${encodeURIComponent(token)}`, 'PAGE_TOKEN_QUERY_MISMATCH'],
      ['?pageSize=101', 'PAGE_SIZE_TOO_LARGE'],
      ['?pageSize=-1', 'VALIDATION_ERROR'],
      ['?state=deleted', 'VALIDATION_ERROR'],
      ['?state=', 'VALIDATION_ERROR'],
      ['?tenantId=not-a-uuid', 'VALIDATION_ERROR'],
      [`?tenantId=${'9'.repeat(10000)}`, 'VALIDATION_ERROR'],
      ['?tenantId=%00', 'VALIDATION_ERROR'],
    ]
    for (const [q, code] of cases) {
      const res = await u.client.get(`/users/me/notifications${q}`)
      expect([q.slice(0, 60), res.status, res.json?.code]).toEqual([q.slice(0, 60), 400, code])
    }
    // Another user's token, valid for them, is not valid here.
    const other = await signedUpUser(api.url)
    for (let i = 0; i < 2; i++) await note(other)
    const theirs = (await other.client.get('/users/me/notifications?pageSize=1')).json.nextPageToken as string
    expect((await u.client.get(`/users/me/notifications?pageSize=1&pageToken=${encodeURIComponent(theirs)}`)).json.code).toBe('PAGE_TOKEN_QUERY_MISMATCH')
    for (const body of [{}, { upTo: 'x'.repeat(100_000) }, { upTo: null }, { upTo: crypto.randomUUID(), extra: 1 }]) {
      expect((await u.client.post('/users/me/notifications/read-all', body)).status).toBe(400)
    }
  })

  test('read-all racing a new notification: the one that arrived after the newest seen stays unread', async () => {
    const u = await signedUpUser(api.url)
    await note(u)
    await note(u)
    const seen = await inbox(u)
    expect(seen).toHaveLength(2)
    const late = (await note(u))! // arrives between the list and the read-all
    const res = await u.client.post('/users/me/notifications/read-all', { upTo: seen[0]!.id })
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual({ markedRead: 2, upTo: seen[0]!.id })
    expect((await inbox(u)).map((x) => [x.id, x.state])).toEqual([[late.id, 'unread'], ...seen.map((x) => [x.id, 'read'])])
    expect((await counts(u)).unread).toBe(1)
  })

  test('a notification whose transaction is still open takes its number only after it commits: read-all cannot overtake it', async () => {
    const u = await signedUpUser(api.url)
    await note(u)
    let release!: () => void
    const held = new Promise<void>((r) => {
      release = r
    })
    let slowId: string | undefined
    // The slow writer holds the inbox's lock until it commits; a second writer waits for it rather than numbering ahead.
    const slow = api.sql.begin(async (tx) => {
      slowId = (await notify(tx, api.deps.keys, { userId: u.userId, kind: 'account.totp_enrolled', fields: {}, dedupeKey: crypto.randomUUID() }))!.id
      await held
    })
    while (!slowId) await Bun.sleep(5)
    const fast = note(u)
    // Wait until Postgres reports the second writer blocked on the first, then let the first commit.
    for (;;) {
      const [row] = await api.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%notification_inboxes%' and datname = current_database()`
      if (row!.n > 0) break
      await Bun.sleep(10)
    }
    release()
    await slow
    const fastId = (await fast)!.id
    const listed = await inbox(u)
    expect(listed.slice(0, 2).map((x) => x.id)).toEqual([fastId, slowId!])
    // Up to the slow one: the fast one, numbered after it, stays unread.
    expect((await u.client.post('/users/me/notifications/read-all', { upTo: slowId })).json.data.markedRead).toBe(2)
    expect((await inbox(u, '?state=unread')).map((x) => x.id)).toEqual([fastId])
  })
})

describe('the inbox', () => {
  test('states, counts, seen, filters and paging', async () => {
    const u = await signedUpUser(api.url)
    expect(await counts(u)).toEqual({ unread: 0, unseen: 0 })
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await note(u))!.id)
    ids.reverse() // newest first
    expect(await counts(u)).toEqual({ unread: 5, unseen: 5 })

    // A page shows the newest two: seen is up to the newest, so nothing is unseen; all stay unread.
    const page1 = await u.client.get('/users/me/notifications?pageSize=2')
    expect(page1.json.data.map((x: { id: string }) => x.id)).toEqual(ids.slice(0, 2))
    expect(await counts(u)).toEqual({ unread: 5, unseen: 0 })
    const page2 = await u.client.get(`/users/me/notifications?pageSize=2&pageToken=${encodeURIComponent(page1.json.nextPageToken)}`)
    const page3 = await u.client.get(`/users/me/notifications?pageSize=2&pageToken=${encodeURIComponent(page2.json.nextPageToken)}`)
    expect([...page2.json.data, ...page3.json.data].map((x: { id: string }) => x.id)).toEqual(ids.slice(2))
    expect(page3.json.nextPageToken).toBeUndefined()
    await note(u)
    expect(await counts(u)).toEqual({ unread: 6, unseen: 1 })
    await inbox(u)

    const [a, b, c] = ids
    const read = await u.client.post(`/users/me/notifications/${a}/read`)
    expect(read.status).toBe(200)
    expect(read.json.data).toMatchObject({ id: a, state: 'read', kind: 'account.totp_removed', tenantId: null, fields: {} })
    expect(read.json.data.readAt).toBeString()
    const again = await u.client.post(`/users/me/notifications/${a}/read`)
    expect(again.json.data).toEqual(read.json.data)
    expect((await counts(u)).unread).toBe(5)

    const archived = await u.client.post(`/users/me/notifications/${b}/archive`)
    expect(archived.json.data).toMatchObject({ id: b, state: 'archived' })
    expect(archived.json.data.readAt).toBeString()
    expect((await counts(u)).unread).toBe(4)
    // Archiving what was read already leaves the count alone.
    await u.client.post(`/users/me/notifications/${a}/archive`)
    expect((await counts(u)).unread).toBe(4)

    const unread = await u.client.post(`/users/me/notifications/${a}/unread`)
    expect(unread.json.data).toMatchObject({ id: a, state: 'unread', readAt: null, archivedAt: null })
    expect((await counts(u)).unread).toBe(5)
    await u.client.post(`/users/me/notifications/${c}/read`)

    const byState = async (s: string) => (await inbox(u, s ? `?state=${s}` : '')).map((x) => x.id)
    expect(await byState('archived')).toEqual([b!])
    expect(await byState('read')).toEqual([c!])
    expect((await byState('unread')).includes(a!)).toBe(true)
    expect((await byState('')).includes(b!)).toBe(false)
    expect((await counts(u)).unread).toBe((await byState('unread')).length)
  })

  test('a dedupe key is used once: the second notice is dropped and counts nothing', async () => {
    const u = await signedUpUser(api.url)
    const key = crypto.randomUUID()
    expect(await note(u, key)).not.toBeNull()
    expect(await note(u, key)).toBeNull()
    expect(await counts(u)).toEqual({ unread: 1, unseen: 1 })
    expect(await inbox(u)).toHaveLength(1)
  })
})

describe('what writes a notification', () => {
  test('an invitation to a tenant reaches an existing account, with no token or link in it', async () => {
    const owner = await tenantOwner(api.url)
    const invitee = await signedUpUser(api.url)
    const res = await owner.client.post('/tenant-invitations', { email: invitee.email, role: 'viewer' }, { 'idempotency-key': crypto.randomUUID() })
    expect(res.status).toBe(201)
    const [n] = await inbox(invitee, `?tenantId=${owner.tenantId}`)
    expect(n).toMatchObject({ kind: 'tenant.invitation_received', tenantId: owner.tenantId, state: 'unread' })
    expect(n!.fields).toEqual({ invitationId: res.json.data.id, tenantName: 'Test tenant', role: 'viewer', expiresAt: res.json.data.expiresAt })
    expect(JSON.stringify(n)).not.toContain('token')
  })

  test('TOTP enrolled and removed, a passkey removed: each a notification of the account (no tenant)', async () => {
    const u = await signedUpUser(api.url)
    const { secret } = await enrolTotp(u.client)
    const { codeAt } = await import('../mfa/helpers')
    expect((await u.client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: await codeAt(secret) } })).status).toBe(200)
    const [passkey] = await api.sql<{ id: string }[]>`
      insert into webauthn_credentials (user_id, credential_id, public_key, sign_count, device_type, backed_up)
      values (${u.userId}, ${crypto.randomUUID()}, '\\x00'::bytea, 0, 'singleDevice', false) returning id`
    // The session answered TOTP while it had it; a fresh one without a second factor removes the passkey.
    expect((await u.client.delete(`/users/me/webauthn/credentials/${passkey!.id}`)).status).toBe(200)
    const got = await inbox(u)
    expect(got.map((x) => [x.kind, x.tenantId, x.fields])).toEqual([
      ['account.passkey_removed', null, { passkeyId: passkey!.id }],
      ['account.totp_removed', null, {}],
      ['account.totp_enrolled', null, {}],
    ])
  })

  test('a sign-in from a new client notifies; the same client again, and the account’s first client, do not', async () => {
    const u = await signedUpUser(api.url) // registration: the first client, no notice
    expect(await inbox(u)).toEqual([])
    await signInFrom(u.email, FIREFOX)
    await signInFrom(u.email, FIREFOX.replace('120.0', '121.0')) // a newer version: the same family
    const [n, ...rest] = await inbox(u)
    expect(rest).toEqual([])
    expect(n).toMatchObject({
      kind: 'account.new_sign_in',
      tenantId: null,
      fields: { method: 'password', client: 'Firefox on Linux', network: '127.0.0.0/24' },
    })

    // 91 days later (the clock moved by moving the stored time) the same client is new again.
    await api.sql`update notification_known_clients set last_seen_at = last_seen_at - interval '91 days' where user_id = ${u.userId}`
    await signInFrom(u.email, FIREFOX)
    expect((await inbox(u)).map((x) => x.kind)).toEqual(['account.new_sign_in', 'account.new_sign_in'])
  })

  test('a client seen within the day keeps its row as it is; one recorded two days ago is brought up to now', async () => {
    const u = await signedUpUser(api.url)
    await signInFrom(u.email, FIREFOX)
    const row = () =>
      api.sql<{ xmin: string; last_seen_at: Date; age_s: number }[]>`
        select xmin::text, last_seen_at, extract(epoch from now() - last_seen_at)::float8 as age_s
          from notification_known_clients where user_id = ${u.userId} and client_key like 'Firefox%'`.then((r) => r[0]!)
    const before = await row()
    await signInFrom(u.email, FIREFOX)
    // Not rewritten: no new row version, the same recorded time.
    const again = await row()
    expect([again.xmin, again.last_seen_at]).toEqual([before.xmin, before.last_seen_at])
    await api.sql`update notification_known_clients set last_seen_at = last_seen_at - interval '2 days' where user_id = ${u.userId}`
    await signInFrom(u.email, FIREFOX)
    expect((await row()).age_s).toBeLessThan(3600)
    expect((await inbox(u)).map((x) => x.kind)).toEqual(['account.new_sign_in'])
  })
})

describe('preferences and mail', () => {
  test('defaults, replace, audited; an unknown kind is 400', async () => {
    const u = await signedUpUser(api.url)
    const got = await u.client.get('/users/me/notification-preferences')
    expect(got.status).toBe(200)
    expect(got.json.data.mail).toMatchObject({ 'account.new_sign_in': true, 'edge_package.build_finished': false, 'tenant.invitation_received': false })
    const put = await u.client.call('PUT', '/users/me/notification-preferences', {
      body: { mail: { 'account.new_sign_in': false, 'audit_export.ready': true } },
    })
    expect([put.status, put.text]).toEqual([200, put.text])
    expect(put.json.data.mail).toMatchObject({ 'account.new_sign_in': false, 'audit_export.ready': true, 'tenant.invitation_received': false })
    // Replaced: what is left out returns to its default.
    const back = await u.client.call('PUT', '/users/me/notification-preferences', { body: { mail: {} } })
    expect(back.json.data).toEqual(got.json.data)
    expect((await u.client.call('PUT', '/users/me/notification-preferences', { body: { mail: { 'no.such_kind': true } } })).status).toBe(400)
    expect((await u.client.call('PUT', '/users/me/notification-preferences', { body: { mail: { 'account.new_sign_in': 'yes' } } })).status).toBe(400)
    await sealAudit(api.sql)
    const audit = await api.sql<{ action: string }[]>`select action from audit_log where subject_user_id = ${u.userId} and action like 'user.notification%'`
    expect(audit.map((a) => a.action)).toEqual(['user.notification_preferences_updated', 'user.notification_preferences_updated'])
  })

  const outbox = (u: User) =>
    api.sql<{ id: string }[]>`select id from mail_outbox where recipient = ${u.email} and template = 'notification'`.then((r) => r.length)

  test('one mail per kind per user per hour, the hour kept in database time; none when the kind is turned off', async () => {
    const u = await signedUpUser(api.url)
    for (let i = 0; i < 3; i++) await note(u)
    expect(await outbox(u)).toBe(1)
    // An hour later, by the database's clock: the throttle's last mail moved back rather than the test sleeping.
    await api.sql`update notification_mail_throttle set last_mailed_at = last_mailed_at - interval '61 minutes' where user_id = ${u.userId}`
    await note(u)
    await note(u)
    expect(await outbox(u)).toBe(2)
    // 59 minutes is not an hour.
    await api.sql`update notification_mail_throttle set last_mailed_at = last_mailed_at - interval '59 minutes' where user_id = ${u.userId}`
    await note(u)
    expect(await outbox(u)).toBe(2)
    // Another kind has its own hour.
    await api.sql.begin((tx) => notify(tx, api.deps.keys, { userId: u.userId, kind: 'account.totp_enrolled', fields: {}, dedupeKey: crypto.randomUUID() }))
    expect(await outbox(u)).toBe(3)

    await u.client.call('PUT', '/users/me/notification-preferences', { body: { mail: { 'account.totp_removed': false } } })
    await api.sql`update notification_mail_throttle set last_mailed_at = last_mailed_at - interval '2 hours' where user_id = ${u.userId}`
    await note(u)
    expect(await outbox(u)).toBe(3)
    expect(await inbox(u)).toHaveLength(8)
  })

  test('the mail is sent by the mail workflow and says what happened, with no code in it', async () => {
    const { waitForMail } = await import('../support/mailbox')
    const u = await signedUpUser(api.url)
    const after = new Date(Date.now() - 1000)
    await enrolTotp(u.client)
    const mail = await waitForMail(u.email, { subject: /authenticator app/, after })
    expect(mail.subject).toContain('An authenticator app (TOTP) was enrolled on your account')
  })
})
