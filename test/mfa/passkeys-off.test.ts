import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { SoftAuthenticator } from '../support/authenticator'
import { Client } from '../support/client'
import { signedUpUser } from '../support/fixtures'
import { enrolTotp, signIn } from './helpers'

const ORIGIN = 'http://localhost:4998'
// Two deployments over one database: one offers passkeys, the other has WEBAUTHN_RP_ID set empty.
const on = useApi({ WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: ORIGIN })
const off = useApi({ WEBAUTHN_RP_ID: '' })

const NOT_CONFIGURED = [400, 'AUTH_PROVIDER_NOT_CONFIGURED']
const refusal = (res: { status: number; json: { code?: string } }) => [res.status, res.json.code]

describe('a deployment without passkeys', () => {
  test('every passkey ceremony answers AUTH_PROVIDER_NOT_CONFIGURED, before a challenge is issued or spent', async () => {
    const { client, email } = await signedUpUser(off.url)
    expect(refusal(await new Client(off.url).post('/sessions/passkey-challenges'))).toEqual(NOT_CONFIGURED)
    expect(refusal(await client.post('/users/me/webauthn/registration-options'))).toEqual(NOT_CONFIGURED)

    // A registration and an assertion made against the deployment that has passkeys are refused here all the same.
    const mine = await signIn(on.url, email)
    const key = new SoftAuthenticator(ORIGIN)
    const options = (await mine.client.post('/users/me/webauthn/registration-options')).json.data
    expect(refusal(await client.post('/users/me/webauthn/registrations', { response: key.register(options) }))).toEqual(NOT_CONFIGURED)
    const challenge = (await new Client(on.url).post('/sessions/passkey-challenges')).json.data.options.challenge
    expect(refusal(await new Client(off.url).post('/sessions', { assertion: key.assert(challenge) }))).toEqual(NOT_CONFIGURED)
    // Nothing was spent: the registration still completes where passkeys are offered.
    expect((await mine.client.post('/users/me/webauthn/registrations', { response: key.register(options) })).status).toBe(201)
  })

  test('the sign-in page is not offered passkeys, and the password sign-in still works', async () => {
    const { email } = await signedUpUser(on.url)
    const options = (base: string) => new Client(base).get(`/auth/login-options?email=${encodeURIComponent(email)}`).then((r) => r.json.data)
    expect((await options(on.url)).passkey).toBe(true)
    expect((await options(off.url)).passkey).toBe(false)
    expect((await signIn(off.url, email)).session.state).toBe('active')
  })

  test("a second-factor challenge offers the account's other factors, not its passkeys", async () => {
    const { client, email } = await signedUpUser(on.url)
    await enrolTotp(client)
    const key = new SoftAuthenticator(ORIGIN)
    const options = (await client.post('/users/me/webauthn/registration-options')).json.data
    expect((await client.post('/users/me/webauthn/registrations', { response: key.register(options) })).status).toBe(201)

    const gated = async (base: string) => (await signIn(base, email)).session.mfaChallenge
    expect(await gated(on.url)).toMatchObject({ methods: ['totp', 'recovery_code', 'webauthn'] })
    expect(await gated(off.url)).toMatchObject({ methods: ['totp', 'recovery_code'], webauthn: null })
  })
})
