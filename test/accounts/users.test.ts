import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, patFor, signedUpUser, tenantOwner, uniqueEmail } from '../support/fixtures'
import { initialPasswordFrom, mailTo, memberOf, NEW_PASSWORD, signIn, tokenFrom } from './helpers'

const api = useApi()

describe('administrator provisioning (POST /users with mode)', () => {
  test('invite: an activation mail; ACTIVATION_REQUIRED until a password is chosen through the link', async () => {
    const owner = await tenantOwner(api.url)
    const email = uniqueEmail('invitee')
    const res = await owner.client.post('/users', { mode: 'invite', role: 'researcher', email, displayName: 'Ada' })
    expect(res.status).toBe(201)
    expect(res.json.data).toMatchObject({
      user: { email, displayName: 'Ada', status: 'activation_required' },
      membership: { tenantId: owner.tenantId, role: 'researcher', status: 'active' },
      delivery: 'activation_link_mailed',
    })
    const mail = await mailTo(email, { subject: /added to/ })
    expect(mail.text).toContain('/console/activate?token=') // the console's page (test/console/links.test.ts)

    const early = await new Client(api.url).post('/sessions', { email, password: PASSWORD })
    expect(early.status).toBe(401)
    expect(early.json.code).toBe('ACTIVATION_REQUIRED')

    const done = await new Client(api.url).post('/password-resets/confirmations', { token: tokenFrom(mail.text), newPassword: PASSWORD })
    expect(done.status).toBe(201)
    const member = await signIn(api.url, email, PASSWORD)
    const me = await member.get('/users/me')
    expect(me.json.data.user.status).toBe('active')
    expect(me.json.data.currentMembership).toMatchObject({ tenantId: owner.tenantId, role: 'researcher' })
  })

  test('create: the initial password is mailed, never returned, and must be replaced first (INITIAL_PASSWORD_REQUIRED)', async () => {
    const owner = await tenantOwner(api.url)
    const email = uniqueEmail('created')
    const res = await owner.client.post('/users', { mode: 'create', role: 'viewer', email })
    expect(res.status).toBe(201)
    expect(res.json.data.delivery).toBe('initial_password_mailed')
    const initial = initialPasswordFrom((await mailTo(email, { subject: /Your account/ })).text)
    expect(res.text).not.toContain(initial)

    const member = await signIn(api.url, email, initial)
    expect((await member.get('/users/me')).status).toBe(200)
    const blocked = await member.patch('/users/me', { displayName: 'x' })
    expect(blocked.status).toBe(400)
    expect(blocked.json.code).toBe('INITIAL_PASSWORD_REQUIRED')
    // Outside the /users family the same gate answers FORBIDDEN (its sets have no INITIAL_PASSWORD_REQUIRED).
    expect((await member.post('/tenants', { name: 'x', slug: `x-${crypto.randomUUID().slice(0, 8)}` })).json.code).toBe('FORBIDDEN')

    expect((await member.patch('/users/me/password', { currentPassword: initial, newPassword: NEW_PASSWORD })).status).toBe(200)
    expect((await member.patch('/users/me', { displayName: 'Free' })).status).toBe(200)
    // A fresh sign-in is not gated either.
    expect((await (await signIn(api.url, email, NEW_PASSWORD)).patch('/users/me', { displayName: 'Again' })).status).toBe(200)
  })

  test('EMAIL_ALREADY_REGISTERED, USER_ALREADY_MEMBER, and the admin variant needs tenant:manage', async () => {
    const owner = await tenantOwner(api.url)
    const outsider = await signedUpUser(api.url)
    const taken = await owner.client.post('/users', { mode: 'invite', role: 'viewer', email: outsider.email.toUpperCase() })
    expect(taken.status).toBe(409)
    expect(taken.json.code).toBe('EMAIL_ALREADY_REGISTERED')
    const member = await memberOf(api.url, owner.client, 'viewer')
    const again = await owner.client.post('/users', { mode: 'create', role: 'admin', email: member.email })
    expect(again.json.code).toBe('USER_ALREADY_MEMBER')

    const denied = await member.client.post('/users', { mode: 'invite', role: 'viewer', email: uniqueEmail() })
    expect(denied.status).toBe(403)
    expect(denied.json.code).toBe('PERMISSION_DENIED')
    const anonymous = await new Client(api.url).post('/users', { mode: 'invite', role: 'viewer', email: uniqueEmail() })
    expect(anonymous.status).toBe(401)
    // A body mixing the variants matches neither.
    const mixed = await new Client(api.url).post('/users', { email: uniqueEmail(), password: PASSWORD, mode: 'invite' })
    expect(mixed.json.code).toBe('VALIDATION_ERROR')
  })

  test('an administrator can provision with a PAT, and Idempotency-Key replays within the tenant', async () => {
    const owner = await tenantOwner(api.url)
    // The role ceiling of a PAT is its scopes: granting viewer takes every point a viewer has.
    const { token } = await patFor(owner.client, ['tenant:read', 'tenant:manage', 'apikey:read', 'apikey:write', 'model:read'])
    const pat = new Client(api.url).withBearer(token)
    const email = uniqueEmail('idem')
    const key = crypto.randomUUID()
    const first = await pat.post('/users', { mode: 'invite', role: 'viewer', email }, { 'idempotency-key': key })
    expect(first.status).toBe(201)
    const replay = await pat.post('/users', { mode: 'invite', role: 'viewer', email }, { 'idempotency-key': key })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.text).toBe(first.text)
    // The same key in another tenant is another key.
    const other = await tenantOwner(api.url)
    const elsewhere = await other.client.post('/users', { mode: 'invite', role: 'viewer', email }, { 'idempotency-key': key })
    expect(elsewhere.json.code).toBe('EMAIL_ALREADY_REGISTERED')
  })
})

describe('passwords', () => {
  test('policy: minimum length, common passwords refused, long passphrases accepted; the rule is named', async () => {
    const short = await new Client(api.url).post('/users', { email: uniqueEmail(), password: 'Ab1!xyz' })
    expect(short.json).toMatchObject({ code: 'PASSWORD_POLICY_VIOLATION', message: expect.stringContaining('min_length') })
    for (const common of ['password123', 'qwertyuiop', 'iloveyou1']) {
      const res = await new Client(api.url).post('/users', { email: uniqueEmail(), password: common })
      expect(res.json).toMatchObject({ code: 'PASSWORD_POLICY_VIOLATION', message: expect.stringContaining('common_password') })
    }
    // No composition rules: a long lowercase passphrase is fine, and 64+ characters are allowed.
    expect((await new Client(api.url).post('/users', { email: uniqueEmail(), password: 'tiny lamps glow under the quiet harbour' })).status).toBe(201)
    expect((await new Client(api.url).post('/users', { email: uniqueEmail(), password: 'x7#kP9!m'.repeat(12) })).status).toBe(201)
  })

  test('change: CURRENT_PASSWORD_REQUIRED / CURRENT_PASSWORD_INVALID; the last five are refused; other sessions end on request', async () => {
    const { client, email } = await signedUpUser(api.url)
    await client.post('/tenants', { name: 'T', slug: `t-${crypto.randomUUID().slice(0, 8)}` })
    const other = await signIn(api.url, email, PASSWORD)

    const missing = await client.patch('/users/me/password', { newPassword: NEW_PASSWORD })
    expect(missing.json.code).toBe('CURRENT_PASSWORD_REQUIRED')
    const wrong = await client.patch('/users/me/password', { currentPassword: 'not it at all', newPassword: NEW_PASSWORD })
    expect(wrong.json.code).toBe('CURRENT_PASSWORD_INVALID')
    const same = await client.patch('/users/me/password', { currentPassword: PASSWORD, newPassword: PASSWORD })
    expect(same.json.code).toBe('PASSWORD_REUSE_NOT_ALLOWED')

    const changed = await client.patch('/users/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, endOtherSessions: true })
    expect(changed.status).toBe(200)
    expect(changed.json.data).toEqual({ passwordChanged: true, otherSessionsEnded: 1 })
    expect((await other.get('/users/me')).json.code).toBe('TOKEN_REVOKED')
    expect((await client.get('/users/me')).status).toBe(200)

    // Walk through four more passwords: the original is still among the last five until the sixth.
    const chain = [NEW_PASSWORD, 'second brand new phrase', 'third brand new phrase', 'fourth brand new phrase', 'fifth brand new phrase']
    for (let i = 1; i < chain.length; i++) {
      expect((await client.patch('/users/me/password', { currentPassword: chain[i - 1], newPassword: chain[i] })).status).toBe(200)
    }
    const back = await client.patch('/users/me/password', { currentPassword: chain[4], newPassword: chain[1] })
    expect(back.json.code).toBe('PASSWORD_REUSE_NOT_ALLOWED')
    expect((await client.patch('/users/me/password', { currentPassword: chain[4], newPassword: PASSWORD })).status).toBe(200)
  })

  test("the tenant's minimum length applies to its members", async () => {
    const owner = await tenantOwner(api.url)
    expect((await owner.client.patch('/tenants/current/auth-policy', { passwordMinLength: 30 })).status).toBe(200)
    const res = await owner.client.patch('/users/me/password', { currentPassword: PASSWORD, newPassword: 'twenty-nine chars is too short'.slice(0, 29) })
    expect(res.json).toMatchObject({ code: 'PASSWORD_POLICY_VIOLATION', message: expect.stringContaining('at least 30') })
  })
})
