// Attempt limits under parallel guessing: 50 wrong answers fired at once must not get more checks than the
// budget allows. Each budget is read back from its counter rows, so a check that slipped through shows.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { signedUpUser } from '../support/fixtures'
import { enrolTotp, signIn } from '../mfa/helpers'
import { codeFrom, mailTo, NEW_PASSWORD } from './helpers'

// Every guess here is anonymous or a refused credential: a larger anonymous budget keeps the IP rate limit from
// answering before the budget under test does.
const api = useApi({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000', RATE_LIMIT_PRINCIPAL_PER_MINUTE: '100000' })

const PARALLEL = 50
const fire = <T>(make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: PARALLEL }, (_, i) => make(i)))
const tally = (codes: (string | number)[]) =>
  codes.reduce<Record<string, number>>((n, c) => {
    n[c] = (n[c] ?? 0) + 1
    return n
  }, {})

const failuresOf = async (userId: string) => (await api.sql<{ n: number }[]>`select count(*)::int as n from mfa_failures where user_id = ${userId}`)[0]!.n

describe('attempt limits hold under 50 parallel wrong guesses', () => {
  test('an MFA sign-in challenge checks exactly 5 answers; a right answer on a challenge with attempts left still works', async () => {
    const { client: enrolled, email, userId } = await signedUpUser(api.url)
    const { recoveryCodes } = await enrolTotp(enrolled)
    const a = await signIn(api.url, email)
    const id = a.session.mfaChallenge.id as string
    const answers = await fire((i) => a.client.post('/sessions/mfa-challenges/confirmations', { challengeId: id, method: 'recovery_code', code: `nope-${i}` }))
    expect(tally(answers.map((r) => r.json.code))).toEqual({ UNAUTHORIZED: PARALLEL })
    const [ch] = await api.sql<{ attempts: number }[]>`select attempts from mfa_challenges where id = ${id}`
    expect({ attempts: ch!.attempts, checked: await failuresOf(userId) }).toEqual({ attempts: 5, checked: 5 })
    // Burnt: even the right answer is refused now.
    const late = await a.client.post('/sessions/mfa-challenges/confirmations', { challengeId: id, method: 'recovery_code', code: recoveryCodes[0] })
    expect(late.json.code).toBe('UNAUTHORIZED')

    const b = await signIn(api.url, email)
    const bid = b.session.mfaChallenge.id as string
    const four = await Promise.all(
      [0, 1, 2, 3].map((i) => b.client.post('/sessions/mfa-challenges/confirmations', { challengeId: bid, method: 'recovery_code', code: `nah-${i}` })),
    )
    expect(four.map((r) => r.status)).toEqual([401, 401, 401, 401])
    const right = await b.client.post('/sessions/mfa-challenges/confirmations', { challengeId: bid, method: 'recovery_code', code: recoveryCodes[1] })
    expect(right.status).toBe(201)
    expect(await failuresOf(userId)).toBe(9) // the right answer took no slot of the account's budget
  })

  test('the per-account second-factor budget checks exactly 10 wrong answers in its window; the rest are 429', async () => {
    const { client, userId } = await signedUpUser(api.url)
    const { recoveryCodes } = await enrolTotp(client)
    const answers = await fire((i) => client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: `wrong-wrong-${i}` } }))
    expect(tally(answers.map((r) => r.json.code))).toEqual({ VALIDATION_ERROR: 10, RATE_LIMITED: PARALLEL - 10 })
    expect(await failuresOf(userId)).toBe(10)
    expect(answers.find((r) => r.status === 429)!.headers.get('ratelimit-policy')).toBe('10;w=900')
    // Once the window has passed (simulated), the right answer works.
    await api.sql`update mfa_failures set failed_at = failed_at - interval '16 minutes' where user_id = ${userId}`
    const removal = await client.call('DELETE', '/users/me/mfa/totp', { body: { reauthenticationCode: recoveryCodes[0] } })
    expect(removal.status).toBe(200)
  })

  test('a password-reset code checks exactly 5 guesses; a right code with attempts left still works', async () => {
    const anon = () => new Client(api.url)
    const reset = async () => {
      const { email, userId } = await signedUpUser(api.url)
      const since = new Date(Date.now() - 1000)
      expect((await anon().post('/password-resets', { email })).status).toBe(202)
      const code = codeFrom((await mailTo(email, { subject: /Reset your/, after: since })).text)
      const wrong = (i: number) => String((Number(code) + 1 + i) % 1e8).padStart(8, '0')
      const attempts = async () => (await api.sql<{ n: number }[]>`select attempts as n from password_resets where user_id = ${userId}`)[0]!.n
      return { email, code, wrong, attempts }
    }

    const r = await reset()
    const answers = await fire((i) => anon().post('/password-resets/confirmations', { email: r.email, code: r.wrong(i), newPassword: NEW_PASSWORD }))
    expect(tally(answers.map((x) => x.json.code))).toEqual({ PASSWORD_RESET_CODE_INVALID: PARALLEL })
    expect(await r.attempts()).toBe(5)
    expect((await anon().post('/password-resets/confirmations', { email: r.email, code: r.code, newPassword: NEW_PASSWORD })).json.code).toBe(
      'PASSWORD_RESET_CODE_INVALID',
    )

    const s = await reset()
    const four = await Promise.all(
      [0, 1, 2, 3].map((i) => anon().post('/password-resets/confirmations', { email: s.email, code: s.wrong(i), newPassword: NEW_PASSWORD })),
    )
    expect(four.map((x) => x.json.code)).toEqual(Array(4).fill('PASSWORD_RESET_CODE_INVALID'))
    // A right code with a refused password takes no attempt: the grant stays usable.
    expect((await anon().post('/password-resets/confirmations', { email: s.email, code: s.code, newPassword: 'short' })).json.code).toBe(
      'PASSWORD_POLICY_VIOLATION',
    )
    expect(await s.attempts()).toBe(4)
    expect((await anon().post('/password-resets/confirmations', { email: s.email, code: s.code, newPassword: NEW_PASSWORD })).status).toBe(201)
  })
})
