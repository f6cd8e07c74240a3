import { totpCode } from '../../api/mfa/totp'
import { Client } from '../support/client'
import { PASSWORD } from '../support/fixtures'

const STEP = 30

/** Waits out the last seconds of a 30 s step, so "this step" and "the step before" stay what the test meant. */
export async function awayFromStepEdge(): Promise<void> {
  const left = STEP - ((Date.now() / 1000) % STEP)
  if (left < 3) await Bun.sleep(left * 1000 + 200)
}

/** The code of the current step (back = 0) or of the step before (back = 1, still accepted once). */
export const codeAt = (secret: string, back: 0 | 1 = 0) => totpCode(secret, Date.now() / 1000 - back * STEP)

/** Enrols TOTP for the signed-in client with the previous step's code, leaving the current step unused. */
export async function enrolTotp(client: Client) {
  await awayFromStepEdge()
  const start = await client.post('/users/me/mfa/totp')
  if (start.status !== 201) throw new Error(`TOTP enrolment failed: ${start.status} ${start.text}`)
  const secret = start.json.data.secret as string
  const verified = await client.post('/users/me/mfa/totp/verifications', { code: await codeAt(secret, 1) })
  if (verified.status !== 201) throw new Error(`TOTP verification failed: ${verified.status} ${verified.text}`)
  return { secret, recoveryCodes: verified.json.data.recoveryCodes as string[] }
}

/** A fresh password sign-in of `email` in a new client. */
export async function signIn(base: string, email: string) {
  const client = new Client(base)
  const res = await client.post('/sessions', { email, password: PASSWORD })
  if (res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${res.text}`)
  return { client, session: res.json.data.session }
}
