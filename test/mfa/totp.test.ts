import { describe, expect, test } from 'bun:test'
import { acceptedTotpStep, totpCode } from '../../api/mfa/totp'
import { open } from '../../api/platform/keyring'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { patFor, signedUpUser, tenantOwner } from '../support/fixtures'
import { awayFromStepEdge, codeAt, enrolTotp, signIn } from './helpers'

const api = useApi()

describe('TOTP codes (RFC 6238)', () => {
  test("the RFC's SHA-1 test vectors (Appendix B, 8 digits)", async () => {
    const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' // base32 of the ASCII seed "12345678901234567890"
    const vectors: [number, string][] = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ]
    for (const [t, code] of vectors) expect(await totpCode(seed, t, 8)).toBe(code)
  })

  test('30 s steps: the current step and one step back; never ahead, never two back, never the same step twice', async () => {
    const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'
    const t = 1111111111 // step 37037037
    const code = await totpCode(seed, t)
    expect(await acceptedTotpStep(seed, code, null, t)).toBe(37037037)
    expect(await acceptedTotpStep(seed, code, null, t + 30)).toBe(37037037)
    expect(await acceptedTotpStep(seed, code, null, t + 60)).toBeNull()
    expect(await acceptedTotpStep(seed, code, null, t - 30)).toBeNull()
    expect(await acceptedTotpStep(seed, code, 37037037, t)).toBeNull()
    expect(await acceptedTotpStep(seed, '12345', null, t)).toBeNull()
  })
})

describe('TOTP enrolment', () => {
  test('start answers a secret, its otpauth URI and a QR code; a wrong code does not activate it', async () => {
    const { client, email } = await signedUpUser(api.url)
    const start = await client.post('/users/me/mfa/totp')
    expect(start.status).toBe(201)
    const { secret, otpauthUri, qrCodeDataUrl } = start.json.data
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(otpauthUri).toStartWith('otpauth://totp/')
    expect(new URL(otpauthUri).searchParams.get('secret')).toBe(secret)
    expect(decodeURIComponent(otpauthUri)).toContain(email)
    expect(qrCodeDataUrl).toStartWith('data:image/png;base64,')
    expect((await client.get('/users/me/mfa')).json.data.totp).toEqual({ status: 'pending', activatedAt: null })

    const wrong = await client.post('/users/me/mfa/totp/verifications', { code: '000000' === (await codeAt(secret)) ? '111111' : '000000' })
    expect(wrong.status).toBe(400)
    expect(wrong.json).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'body.code' }] })
    const malformed = await client.post('/users/me/mfa/totp/verifications', { code: 'abc' })
    expect(malformed.json.code).toBe('VALIDATION_ERROR')
    // Not yet a second factor: signing in is not gated.
    expect((await signIn(api.url, email)).session.state).toBe('active')
  })

  test('a valid code activates it and answers 10 recovery codes once; the status counts them', async () => {
    const { client } = await signedUpUser(api.url)
    const { recoveryCodes } = await enrolTotp(client)
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    for (const c of recoveryCodes) expect(c).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/)
    const status = (await client.get('/users/me/mfa')).json.data
    expect(status).toMatchObject({ totp: { status: 'active' }, recoveryCodesRemaining: 10, webauthnCredentials: 0, methods: ['totp', 'recovery_code'] })
    // Enrolling again while active is refused; so is verifying with nothing pending.
    expect((await client.post('/users/me/mfa/totp')).json.code).toBe('BAD_REQUEST')
    expect((await client.post('/users/me/mfa/totp/verifications', { code: '123456' })).json.code).toBe('BAD_REQUEST')
  })

  test('verification without a pending enrolment is BAD_REQUEST; a restarted enrolment replaces the pending secret', async () => {
    const { client } = await signedUpUser(api.url)
    expect((await client.post('/users/me/mfa/totp/verifications', { code: '123456' })).json.code).toBe('BAD_REQUEST')
    await awayFromStepEdge()
    const first = (await client.post('/users/me/mfa/totp')).json.data.secret
    const second = (await client.post('/users/me/mfa/totp')).json.data.secret
    expect(second).not.toBe(first)
    const stale = await client.post('/users/me/mfa/totp/verifications', { code: await codeAt(first) })
    if ((await codeAt(first)) !== (await codeAt(second))) expect(stale.json.code).toBe('VALIDATION_ERROR')
    expect((await client.post('/users/me/mfa/totp/verifications', { code: await codeAt(second) })).status).toBe(201)
  })
})

describe('sign-in with a second factor', () => {
  test('the session starts in mfa_required; every other call is 401 MFA_REQUIRED until the challenge is confirmed', async () => {
    const owner = await tenantOwner(api.url)
    const { secret } = await enrolTotp(owner.client)
    const { client, session } = await signIn(api.url, owner.email)
    expect(session.state).toBe('mfa_required')
    const challenge = session.mfaChallenge
    expect(challenge.id).toMatch(/^[0-9a-f-]{36}$/)
    expect([challenge.methods, challenge.webauthn]).toEqual([['totp', 'recovery_code'], null])
    for (const [method, path] of [
      ['GET', '/users/me'],
      ['GET', '/users/me/mfa'],
      ['GET', '/users/me/sessions'],
      ['POST', '/users/me/mfa/totp'],
      ['DELETE', '/sessions/current'],
    ] as const) {
      const res = await client.call(method, path)
      expect({ path, status: res.status, code: res.json.code }).toEqual({ path, status: 401, code: 'MFA_REQUIRED' })
    }
    const confirmed = await client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: session.mfaChallenge.id,
      method: 'totp',
      code: await codeAt(secret),
    })
    expect(confirmed.status).toBe(201)
    expect(confirmed.json.data).toMatchObject({ user: { email: owner.email }, currentMembership: { tenantId: owner.tenantId } })
    expect((await client.get('/users/me')).status).toBe(200)
    expect((await client.get('/users/me/sessions')).status).toBe(200)
  })

  test('a TOTP code is never accepted twice, even by another session within its window', async () => {
    const { client: enrolled, email } = await signedUpUser(api.url)
    const { secret } = await enrolTotp(enrolled)
    const code = await codeAt(secret)
    const a = await signIn(api.url, email)
    const b = await signIn(api.url, email)
    const first = await a.client.post('/sessions/mfa-challenges/confirmations', { challengeId: a.session.mfaChallenge.id, method: 'totp', code })
    expect(first.status).toBe(201)
    const replay = await b.client.post('/sessions/mfa-challenges/confirmations', { challengeId: b.session.mfaChallenge.id, method: 'totp', code })
    expect(replay.status).toBe(401)
    expect(replay.json.code).toBe('UNAUTHORIZED')
    // The enrolment code (the step before) is spent too.
    const older = await b.client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: b.session.mfaChallenge.id,
      method: 'totp',
      code: await codeAt(secret, 1),
    })
    expect(older.status).toBe(401)
    expect((await b.client.get('/users/me')).json.code).toBe('MFA_REQUIRED')
  })

  test('racing the same code on two challenges: exactly one wins', async () => {
    const { client: enrolled, email } = await signedUpUser(api.url)
    const { secret } = await enrolTotp(enrolled)
    const code = await codeAt(secret)
    const sessions = await Promise.all([1, 2, 3, 4].map(() => signIn(api.url, email)))
    const answers = await Promise.all(
      sessions.map((s) => s.client.post('/sessions/mfa-challenges/confirmations', { challengeId: s.session.mfaChallenge.id, method: 'totp', code })),
    )
    expect(answers.map((r) => r.status).sort()).toEqual([201, 401, 401, 401])
  })

  test('a recovery code works once; the count goes down', async () => {
    const { client: enrolled, email } = await signedUpUser(api.url)
    const { recoveryCodes } = await enrolTotp(enrolled)
    const a = await signIn(api.url, email)
    const ok = await a.client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: a.session.mfaChallenge.id,
      method: 'recovery_code',
      code: recoveryCodes[0]!.toUpperCase(),
    })
    expect(ok.status).toBe(201)
    expect((await a.client.get('/users/me/mfa')).json.data.recoveryCodesRemaining).toBe(9)
    const b = await signIn(api.url, email)
    const again = await b.client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: b.session.mfaChallenge.id,
      method: 'recovery_code',
      code: recoveryCodes[0],
    })
    expect(again.json.code).toBe('UNAUTHORIZED')
  })

  test('five wrong answers burn the challenge; an answered challenge cannot be answered again', async () => {
    const { client: enrolled, email } = await signedUpUser(api.url)
    const { secret, recoveryCodes } = await enrolTotp(enrolled)
    const a = await signIn(api.url, email)
    const id = a.session.mfaChallenge.id
    const right = await codeAt(secret)
    const wrong = right === '000000' ? '000001' : '000000'
    for (let i = 0; i < 5; i++) {
      expect((await a.client.post('/sessions/mfa-challenges/confirmations', { challengeId: id, method: 'totp', code: wrong })).json.code).toBe('UNAUTHORIZED')
    }
    expect((await a.client.post('/sessions/mfa-challenges/confirmations', { challengeId: id, method: 'totp', code: right })).json.code).toBe('UNAUTHORIZED')
    const b = await signIn(api.url, email)
    const body = { challengeId: b.session.mfaChallenge.id, method: 'recovery_code', code: recoveryCodes[1] }
    expect((await b.client.post('/sessions/mfa-challenges/confirmations', body)).status).toBe(201)
    expect((await b.client.post('/sessions/mfa-challenges/confirmations', { ...body, code: recoveryCodes[2] })).json.code).toBe('UNAUTHORIZED')
    // An unknown challenge and a malformed answer.
    expect((await b.client.post('/sessions/mfa-challenges/confirmations', { ...body, challengeId: crypto.randomUUID() })).json.code).toBe('UNAUTHORIZED')
    expect((await b.client.post('/sessions/mfa-challenges/confirmations', { challengeId: 'x', method: 'sms', code: '1' })).json.code).toBe('VALIDATION_ERROR')
  })

  test('ten wrong answers per account in 15 minutes, over any challenges and re-authentications, are then 429 RATE_LIMITED', async () => {
    const { client: enrolled, email } = await signedUpUser(api.url)
    const { recoveryCodes } = await enrolTotp(enrolled)
    for (let i = 0; i < 2; i++) {
      expect((await enrolled.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: 'wrong-wrong-wrong' } })).json.code).toBe('VALIDATION_ERROR')
    }
    const a = await signIn(api.url, email)
    for (let i = 0; i < 5; i++) {
      expect(
        (await a.client.post('/sessions/mfa-challenges/confirmations', { challengeId: a.session.mfaChallenge.id, method: 'recovery_code', code: `nope-${i}` }))
          .json.code,
      ).toBe('UNAUTHORIZED')
    }
    const b = await signIn(api.url, email)
    const answer = (code: string) =>
      b.client.post('/sessions/mfa-challenges/confirmations', { challengeId: b.session.mfaChallenge.id, method: 'recovery_code', code })
    for (let i = 0; i < 3; i++) expect((await answer(`nope-${i}`)).json.code).toBe('UNAUTHORIZED')
    const limited = await answer(recoveryCodes[0]!)
    expect(limited.status).toBe(429)
    expect(limited.json.code).toBe('RATE_LIMITED')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(800)
    expect(limited.headers.get('ratelimit-policy')).toBe('10;w=900')
    const removal = await enrolled.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: recoveryCodes[0] } })
    expect(removal.json.code).toBe('RATE_LIMITED')
    // Once the window has passed (simulated), the right answer works.
    await api.sql`update mfa_failures set failed_at = failed_at - interval '16 minutes' where user_id = (select id from users where email = ${email})`
    expect((await answer(recoveryCodes[0]!)).status).toBe(201)
  })

  test('confirmations honour Idempotency-Key: a replay answers the first response; another body is IDEMPOTENCY_CONFLICT', async () => {
    const { client: enrolled, email } = await signedUpUser(api.url)
    const { recoveryCodes } = await enrolTotp(enrolled)
    const a = await signIn(api.url, email)
    const key = { 'idempotency-key': crypto.randomUUID() }
    const body = { challengeId: a.session.mfaChallenge.id, method: 'recovery_code', code: recoveryCodes[0] }
    const first = await a.client.post('/sessions/mfa-challenges/confirmations', body, key)
    const again = await a.client.post('/sessions/mfa-challenges/confirmations', body, key)
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const other = await a.client.post('/sessions/mfa-challenges/confirmations', { ...body, code: recoveryCodes[1] }, key)
    expect(other.status).toBe(409)
    expect(other.json.code).toBe('IDEMPOTENCY_CONFLICT')
    expect((await a.client.post('/sessions/mfa-challenges/confirmations', body, { 'idempotency-key': ' bad key ' })).json.code).toBe('IDEMPOTENCY_KEY_INVALID')
  })
})

describe('TOTP removal', () => {
  test('needs a current code or a recovery code; afterwards sign-in is not gated', async () => {
    const { client, email } = await signedUpUser(api.url)
    const { recoveryCodes } = await enrolTotp(client)
    const missing = await client.call('DELETE', '/users/me/mfa/totp', { body: {} })
    expect(missing.status).toBe(400)
    expect(missing.json).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'body.reauthenticationCode' }] })
    expect((await client.delete('/users/me/mfa/totp')).json.code).toBe('VALIDATION_ERROR')
    expect((await client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: 'nope-nope-nope-nope' } })).json.code).toBe('VALIDATION_ERROR')
    const removed = await client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: recoveryCodes[3] } })
    expect(removed.status).toBe(200)
    expect(removed.json.data).toEqual({ removed: true })
    expect((await client.get('/users/me/mfa')).json.data).toMatchObject({ totp: { status: 'none' }, recoveryCodesRemaining: 0, methods: [] })
    expect((await signIn(api.url, email)).session).toMatchObject({ state: 'active', mfaChallenge: null })
  })

  test('a current TOTP code removes it too, and is spent by doing so', async () => {
    const { client } = await signedUpUser(api.url)
    const { secret } = await enrolTotp(client)
    const code = await codeAt(secret)
    expect((await client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: code } })).status).toBe(200)
  })

  test('without an active factor the removal only drops a pending enrolment', async () => {
    const { client } = await signedUpUser(api.url)
    await client.post('/users/me/mfa/totp')
    expect((await client.delete('/users/me/mfa/totp')).json.data).toEqual({ removed: true })
    expect((await client.get('/users/me/mfa')).json.data.totp.status).toBe('none')
  })
})

describe('who may manage second factors', () => {
  test('a PAT is refused (403 FORBIDDEN); cookie calls need the CSRF header', async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['tenant:read'])
    const pat = new Client(api.url).withBearer(token)
    for (const [method, path] of [
      ['GET', '/users/me/mfa'],
      ['POST', '/users/me/mfa/totp'],
      ['GET', '/users/me/webauthn/credentials'],
    ] as const) {
      const res = await pat.call(method, path)
      expect({ path, status: res.status, code: res.json.code }).toEqual({ path, status: 403, code: 'FORBIDDEN' })
    }
    const csrf = owner.client.csrf
    owner.client.csrf = undefined
    expect((await owner.client.post('/users/me/mfa/totp')).json.code).toBe('CSRF_INVALID')
    owner.client.csrf = csrf
    expect((await new Client(api.url).get('/users/me/mfa')).json.code).toBe('UNAUTHORIZED')
  })

  test('a tenant that requires MFA holds an unenrolled member at the enrolment routes until they enrol', async () => {
    const owner = await tenantOwner(api.url)
    await api.sql`
      insert into tenant_auth_policies (tenant_id, mfa_required, allowed_sign_in_methods, password_min_length,
        session_absolute_minutes, session_idle_minutes, sso_enforced, allowed_email_domains)
      values (${owner.tenantId}, true, ${['password', 'passkey']}, 8, 10080, 1440, false, ${[]})
      on conflict (tenant_id) do update set mfa_required = true`
    // The live session is held at once, not only new ones.
    expect((await owner.client.get('/users/me')).json.code).toBe('MFA_REQUIRED')
    const { client, session } = await signIn(api.url, owner.email)
    expect(session).toMatchObject({ state: 'mfa_enrolment_required', mfaChallenge: null })
    expect((await client.get('/users/me')).json.code).toBe('MFA_REQUIRED')
    expect((await client.get('/users/me/sessions')).json.code).toBe('MFA_REQUIRED')
    expect((await client.get('/users/me/webauthn/credentials')).json.code).toBe('MFA_REQUIRED')
    expect((await client.get('/users/me/mfa')).status).toBe(200)
    expect((await client.post('/users/me/webauthn/registration-options')).status).toBe(201)
    const { secret } = await enrolTotp(client)
    expect((await client.get('/users/me')).status).toBe(200)
    // From now on a sign-in asks for the factor.
    const next = await signIn(api.url, owner.email)
    expect(next.session.state).toBe('mfa_required')
    expect(
      (
        await next.client.post('/sessions/mfa-challenges/confirmations', {
          challengeId: next.session.mfaChallenge.id,
          method: 'totp',
          code: await codeAt(secret),
        })
      ).status,
    ).toBe(201)
    expect((await next.client.get('/users/me')).status).toBe(200)
  })
})

describe('secrets at rest', () => {
  test('a dump of every table holds neither the TOTP secret nor a recovery code in plaintext', async () => {
    const { client, userId } = await signedUpUser(api.url)
    const { secret, recoveryCodes } = await enrolTotp(client)
    const tables = await api.sql<
      { table_name: string }[]
    >`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`
    let dump = ''
    for (const { table_name } of tables) {
      for (const row of await api.sql.unsafe(`select t::text as line from "${table_name}" t`)) dump += `${row.line}\n`
    }
    expect(dump).toContain(userId)
    const [sealed] = await api.sql`select secret_sealed from totp_factors where user_id = ${userId}`
    expect(open(api.deps.keys, 'secrets', sealed!.secret_sealed)).toBe(secret) // sealed, and only the key opens it
    const rawSecret = Buffer.from(base32Decode(secret))
    for (const needle of [
      secret,
      secret.toLowerCase(),
      rawSecret.toString('hex'),
      rawSecret.toString('base64'),
      ...recoveryCodes,
      ...recoveryCodes.map((c) => c.replaceAll('-', '')),
    ]) {
      expect(dump.includes(needle)).toBe(false)
    }
  })
})

function base32Decode(s: string): number[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  let bits = 0,
    value = 0
  const out: number[] = []
  for (const ch of s) {
    value = (value << 5) | alphabet.indexOf(ch)
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return out
}
