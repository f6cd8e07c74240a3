import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { SoftAuthenticator } from '../support/authenticator'
import { Client } from '../support/client'
import { signedUpUser, tenantOwner } from '../support/fixtures'
import { signIn } from './helpers'
import { sealAudit } from '../support/audit'

const ORIGIN = 'http://localhost:4999'
const api = useApi({ WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: `https://other.example, ${ORIGIN}` })

async function registerPasskey(client: Client, name = 'laptop') {
  const key = new SoftAuthenticator(ORIGIN)
  const options = await client.post('/users/me/webauthn/registration-options')
  expect(options.status).toBe(201)
  const res = await client.post('/users/me/webauthn/registrations', { name, response: key.register(options.json.data) })
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`)
  return { key, credential: res.json.data }
}

/** The user's audit entries of one action, oldest first. */
const entries = async (userId: string, action: string) =>
  sealAudit(api.sql).then(
    () => api.sql<{ actor_id: string | null; target_id: string | null; outcome: string; reason: string | null; details: Record<string, unknown> }[]>`
  select actor_id, target_id, outcome, reason, details from audit_log where subject_user_id = ${userId} and action = ${action} order by seq`,
  )

async function passkeyOptions() {
  const res = await new Client(api.url).post('/sessions/passkey-challenges')
  expect(res.status).toBe(201)
  return res.json.data.options
}

describe('passkey registration', () => {
  test('options name the relying party and the user; the response registers a passkey once', async () => {
    const { client, email, userId } = await signedUpUser(api.url)
    const res = await client.post('/users/me/webauthn/registration-options')
    expect(res.status).toBe(201)
    const options = res.json.data
    expect(options.rp).toEqual({ id: 'localhost', name: 'Robot Control Plane' })
    expect(options.user.name).toBe(email)
    expect(Buffer.from(options.user.id, 'base64url').toString()).toBe(userId)
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' })
    const key = new SoftAuthenticator(ORIGIN)
    const response = key.register(options)
    const created = await client.post('/users/me/webauthn/registrations', { name: 'laptop', response })
    expect(created.status).toBe(201)
    expect(created.json.data).toMatchObject({ name: 'laptop', credentialId: key.id, transports: ['internal'], lastUsedAt: null })
    expect([...(await entries(userId, 'user.passkey_added'))]).toEqual([
      {
        actor_id: userId,
        target_id: created.json.data.id,
        outcome: 'success',
        reason: null,
        details: { name: 'laptop', deviceType: 'singleDevice', backedUp: false },
      },
    ])
    // The challenge is spent: the same response cannot register again.
    const replay = await client.post('/users/me/webauthn/registrations', { response })
    expect(replay.json).toMatchObject({ code: 'VALIDATION_ERROR' })
    // A second passkey's options exclude the first.
    const again = (await client.post('/users/me/webauthn/registration-options')).json.data
    expect(again.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([key.id])
    expect((await client.get('/users/me/mfa')).json.data).toMatchObject({ webauthnCredentials: 1, methods: ['webauthn'] })
  })

  test('a foreign origin, a missing user verification or another user’s challenge is refused', async () => {
    const { client } = await signedUpUser(api.url)
    const other = await signedUpUser(api.url)
    const options = (await client.post('/users/me/webauthn/registration-options')).json.data
    const foreign = await client.post('/users/me/webauthn/registrations', { response: new SoftAuthenticator('http://evil.example').register(options) })
    expect(foreign.status).toBe(400)
    expect(foreign.json.code).toBe('VALIDATION_ERROR')
    const options2 = (await client.post('/users/me/webauthn/registration-options')).json.data
    expect(
      (await client.post('/users/me/webauthn/registrations', { response: new SoftAuthenticator(ORIGIN).register(options2, { uv: false }) })).json.code,
    ).toBe('VALIDATION_ERROR')
    const options3 = (await client.post('/users/me/webauthn/registration-options')).json.data
    expect((await other.client.post('/users/me/webauthn/registrations', { response: new SoftAuthenticator(ORIGIN).register(options3) })).json.code).toBe(
      'VALIDATION_ERROR',
    )
    expect((await client.post('/users/me/webauthn/registrations', { response: { id: 'x' } })).json.code).toBe('VALIDATION_ERROR')
  })

  test('Idempotency-Key: a malformed key is 400; the same key with another body is 409 IDEMPOTENCY_CONFLICT', async () => {
    const { client } = await signedUpUser(api.url)
    expect((await client.post('/users/me/webauthn/registration-options', undefined, { 'idempotency-key': '' })).json.code).toBe('IDEMPOTENCY_KEY_INVALID')
    const key = { 'idempotency-key': crypto.randomUUID() }
    const first = await client.post('/users/me/webauthn/registration-options', undefined, key)
    const replay = await client.post('/users/me/webauthn/registration-options', undefined, key)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.json.data.challenge).toBe(first.json.data.challenge)
    const regKey = { 'idempotency-key': crypto.randomUUID() }
    const response = new SoftAuthenticator(ORIGIN).register(first.json.data)
    expect((await client.post('/users/me/webauthn/registrations', { name: 'a', response }, regKey)).status).toBe(201)
    const conflict = await client.post('/users/me/webauthn/registrations', { name: 'b', response }, regKey)
    expect(conflict.status).toBe(409)
    expect(conflict.json.code).toBe('IDEMPOTENCY_CONFLICT')
  })
})

describe('passkey list and removal', () => {
  test('paginated newest first; page errors are A400p', async () => {
    const { client } = await signedUpUser(api.url)
    for (const name of ['one', 'two', 'three']) await registerPasskey(client, name)
    const p1 = await client.get('/users/me/webauthn/credentials?pageSize=2')
    expect(p1.status).toBe(200)
    expect(p1.json.data.map((c: { name: string }) => c.name)).toEqual(['three', 'two'])
    expect(p1.json.meta.pageSize).toBe(2)
    const p2 = await client.get(`/users/me/webauthn/credentials?pageSize=2&pageToken=${p1.json.nextPageToken}`)
    expect(p2.json.data.map((c: { name: string }) => c.name)).toEqual(['one'])
    expect(p2.json.nextPageToken).toBeUndefined()
    expect((await client.get('/users/me/webauthn/credentials?pageSize=101')).json.code).toBe('PAGE_SIZE_TOO_LARGE')
    expect((await client.get('/users/me/webauthn/credentials?pageToken=garbage')).json.code).toBe('PAGE_TOKEN_INVALID')
    // A token of another list (the sessions list) is a different query.
    await signIn(api.url, (await client.get('/users/me')).json.data.user.email)
    const owner = await tenantOwner(api.url)
    await signIn(api.url, owner.email)
    const sessions = await owner.client.get('/users/me/sessions?pageSize=1')
    const mismatch = await owner.client.get(`/users/me/webauthn/credentials?pageToken=${sessions.json.nextPageToken}`)
    expect(mismatch.json.code).toBe('PAGE_TOKEN_QUERY_MISMATCH')
  })

  test('removal answers removed: true; unknown, malformed or someone else’s id is 404 RESOURCE_NOT_FOUND', async () => {
    const { client, userId } = await signedUpUser(api.url)
    const other = await signedUpUser(api.url)
    const { credential } = await registerPasskey(client)
    const theirs = await other.client.delete(`/users/me/webauthn/credentials/${credential.id}`)
    expect(theirs.status).toBe(404)
    expect(theirs.json.code).toBe('RESOURCE_NOT_FOUND')
    expect((await client.delete('/users/me/webauthn/credentials/not-a-uuid')).json.code).toBe('RESOURCE_NOT_FOUND')
    const removed = await client.delete(`/users/me/webauthn/credentials/${credential.id}`)
    expect(removed.status).toBe(200)
    expect(removed.json.data).toEqual({ removed: true })
    expect((await client.delete(`/users/me/webauthn/credentials/${credential.id}`)).status).toBe(404)
    expect((await client.get('/users/me/webauthn/credentials')).json.data).toEqual([])
    // Recorded once, for the removal that happened; the refused ones changed nothing.
    expect((await entries(userId, 'user.passkey_removed')).map((e) => [e.actor_id, e.target_id, e.details])).toEqual([
      [userId, credential.id, { name: 'laptop' }],
    ])
  })
})

describe('passwordless sign-in', () => {
  test('a verified assertion over a fresh challenge opens an ungated session', async () => {
    const { client, email, userId } = await signedUpUser(api.url)
    const { key } = await registerPasskey(client)
    const options = await passkeyOptions()
    expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required' })
    const browser = new Client(api.url)
    const res = await browser.post('/sessions', { assertion: key.assert(options.challenge) })
    expect(res.status).toBe(201)
    expect(res.json.data.user.email).toBe(email)
    expect(res.json.data.session).toMatchObject({ state: 'active', mfaChallenge: null })
    expect((await entries(userId, 'user.signed_in')).find((e) => e.target_id === res.json.data.session.id)).toMatchObject({
      actor_id: userId,
      outcome: 'success',
      details: { method: 'passkey', state: 'active' },
    })
    expect(res.headers.get('set-cookie')).toContain('rcp_session=')
    expect((await browser.get('/users/me')).status).toBe(200)
    const listed = (await client.get('/users/me/webauthn/credentials')).json.data[0]
    expect(listed.lastUsedAt).not.toBeNull()
  })

  test('replayed, counter-regressed, unverified, foreign-origin and unknown assertions are 401 UNAUTHORIZED', async () => {
    const { client, userId } = await signedUpUser(api.url)
    const { key } = await registerPasskey(client)
    const options = await passkeyOptions()
    const good = key.assert(options.challenge)
    expect((await new Client(api.url).post('/sessions', { assertion: good })).status).toBe(201)
    const attempts = [
      good, // the challenge is spent
      key.assert((await passkeyOptions()).challenge, { counter: 1 }), // the counter went back: a cloned authenticator
      key.assert((await passkeyOptions()).challenge, { uv: false }),
      key.assert((await passkeyOptions()).challenge, { origin: 'http://evil.example' }),
      new SoftAuthenticator(ORIGIN).assert((await passkeyOptions()).challenge),
      key.assert('bm90LWEtY2hhbGxlbmdl'),
    ]
    for (const [i, assertion] of attempts.entries()) {
      const res = await new Client(api.url).post('/sessions', { assertion })
      expect({ i, status: res.status, code: res.json.code }).toEqual({ i, status: 401, code: 'UNAUTHORIZED' })
    }
    // Each refusal naming this user's passkey is a failure in their activity; the unknown authenticator's names no one.
    const failures = await entries(userId, 'user.sign_in_failed')
    expect(failures.map((f) => [f.actor_id, f.outcome, f.reason, f.details])).toEqual(
      Array(5).fill([null, 'failure', 'invalid_credentials', { method: 'passkey' }]),
    )
    // The counter check did not move the stored counter: the next honest use still works.
    expect((await new Client(api.url).post('/sessions', { assertion: key.assert((await passkeyOptions()).challenge, { counter: 10 }) })).status).toBe(201)
    expect((await new Client(api.url).post('/sessions', { email: 'x@example.test', assertion: good })).json.code).toBe('VALIDATION_ERROR')
  })
})

describe('passkey sign-in and the tenant policy', () => {
  test('a tenant that does not admit passkeys refuses the passwordless sign-in of its members', async () => {
    const owner = await tenantOwner(api.url)
    const { key } = await registerPasskey(owner.client)
    await api.sql`
      insert into tenant_auth_policies (tenant_id, mfa_required, allowed_sign_in_methods, password_min_length,
        session_absolute_minutes, session_idle_minutes, sso_enforced, allowed_email_domains)
      values (${owner.tenantId}, false, ${['password']}, 8, 10080, 1440, false, ${[]})
      on conflict (tenant_id) do update set allowed_sign_in_methods = excluded.allowed_sign_in_methods`
    const refused = await new Client(api.url).post('/sessions', { assertion: key.assert((await passkeyOptions()).challenge) })
    expect(refused.status).toBe(401)
    expect(refused.json.code).toBe('UNAUTHORIZED')
    expect((await entries(owner.userId, 'user.sign_in_failed')).map((f) => [f.reason, f.details])).toEqual([['method_not_allowed', { method: 'passkey' }]])
    await api.sql`update tenant_auth_policies set allowed_sign_in_methods = ${['password', 'passkey']} where tenant_id = ${owner.tenantId}`
    const admitted = await new Client(api.url).post('/sessions', { assertion: key.assert((await passkeyOptions()).challenge) })
    expect(admitted.status).toBe(201)
    expect(admitted.json.data.currentMembership.tenantId).toBe(owner.tenantId)
  })
})

describe('passkey as a second factor', () => {
  test('a password sign-in is challenged with WebAuthn options for the user’s passkeys; an assertion confirms it', async () => {
    const owner = await tenantOwner(api.url)
    const { key } = await registerPasskey(owner.client)
    const { client, session } = await signIn(api.url, owner.email)
    expect(session.state).toBe('mfa_required')
    const challenge = session.mfaChallenge
    expect(challenge.methods).toEqual(['webauthn'])
    expect(challenge.webauthn.allowCredentials.map((c: { id: string }) => c.id)).toEqual([key.id])
    expect((await client.get('/users/me')).json.code).toBe('MFA_REQUIRED')
    // A passkey of another user does not answer it.
    const stranger = await registerPasskey((await signedUpUser(api.url)).client)
    const wrong = await client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: challenge.id,
      method: 'webauthn',
      assertion: stranger.key.assert(challenge.webauthn.challenge),
    })
    expect(wrong.json.code).toBe('UNAUTHORIZED')
    const totp = await client.post('/sessions/mfa-challenges/confirmations', { challengeId: challenge.id, method: 'totp', code: '123456' })
    expect(totp.json.code).toBe('UNAUTHORIZED')
    const ok = await client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: challenge.id,
      method: 'webauthn',
      assertion: key.assert(challenge.webauthn.challenge),
    })
    expect(ok.status).toBe(201)
    expect(ok.json.data.currentMembership.tenantId).toBe(owner.tenantId)
    expect((await client.get('/users/me')).status).toBe(200)
  })
})

describe('interface', () => {
  test('the OpenAPI document names the MFA DTOs and declares each route’s error sets; the account page is not in it', async () => {
    const doc = await (await fetch(`${api.url}/v1/openapi.json`)).json()
    for (const name of [
      'UserMfaStatusDto',
      'TotpEnrollmentStartDto',
      'TotpEnrollmentVerifyRequestDto',
      'TotpEnrollmentVerifyResponseDto',
      'MfaChallengeConfirmRequestDto',
      'WebAuthnCredentialDto',
      'WebAuthnRegistrationOptionsDto',
      'WebAuthnRegistrationRequestDto',
    ])
      expect(Object.keys(doc.components.schemas)).toContain(name)
    const sets = (path: string, method: string) => doc.paths[path][method]['x-error-sets']
    expect(sets('/v1/users/me/mfa', 'get')).toEqual(['A400'])
    for (const [path, method] of [
      ['/v1/users/me/mfa/totp', 'post'],
      ['/v1/users/me/mfa/totp', 'delete'],
      ['/v1/users/me/mfa/totp/verifications', 'post'],
      ['/v1/users/me/webauthn/registration-options', 'post'],
      ['/v1/users/me/webauthn/registrations', 'post'],
    ]) {
      expect({ path, method, sets: sets(path!, method!) }).toEqual({ path, method, sets: ['A400', 'A409'] })
    }
    expect(sets('/v1/users/me/webauthn/credentials', 'get')).toEqual(['A400p'])
    expect(sets('/v1/users/me/webauthn/credentials/{credentialId}', 'delete')).toEqual(['A400', 'A404r', 'A409'])
    expect(doc.paths['/v1/sessions/mfa-challenges/confirmations'].post.security).toEqual([])
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/account'))).toEqual([])
  })
})
