import { Client } from '../support/client'
import { PASSWORD, uniqueEmail } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'

/** The mail to `to`; 30 s, since the worker may still be bundling its workflows when the first test runs. */
export const mailTo = (to: string, opts: Parameters<typeof waitForMail>[1] = {}) => waitForMail(to, { timeoutMs: 30_000, ...opts })

export const NEW_PASSWORD = 'purple elephant juggles seventeen oranges'

export const tokenFrom = (text: string) => decodeURIComponent(/token=([A-Za-z0-9_%.-]+)/.exec(text)![1]!)
export const codeFrom = (text: string) => /code (\d{8})/.exec(text)![1]!
export const initialPasswordFrom = (text: string) => /initial password: (\S+)/.exec(text)![1]!

/** Signs in with email and password; throws unless 201. */
export async function signIn(base: string, email: string, password: string) {
  const client = new Client(base)
  const res = await client.post('/sessions', { email, password })
  if (res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${res.text}`)
  return client
}

/** A member of the owner's tenant with `role`, provisioned with an initial password that is then replaced. */
export async function memberOf(base: string, owner: Client, role: string, email = uniqueEmail(role)) {
  const since = new Date(Date.now() - 1000)
  const res = await owner.post('/users', { mode: 'create', role, email })
  if (res.status !== 201) throw new Error(`provisioning failed: ${res.status} ${res.text}`)
  const mail = await mailTo(email, { subject: /Your account/, after: since })
  const client = await signIn(base, email, initialPasswordFrom(mail.text))
  const changed = await client.patch('/users/me/password', { currentPassword: initialPasswordFrom(mail.text), newPassword: PASSWORD })
  if (changed.status !== 200) throw new Error(`password change failed: ${changed.status} ${changed.text}`)
  return { client, email, userId: res.json.data.user.id as string, membershipId: res.json.data.membership.id as string }
}
