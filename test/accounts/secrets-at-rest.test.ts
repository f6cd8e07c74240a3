import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner, uniqueEmail } from '../support/fixtures'
import { codeFrom, initialPasswordFrom, mailTo, NEW_PASSWORD, tokenFrom } from './helpers'

const api = useApi()

/** Every row of every table, with byte columns as UTF-8, hex and base64: what a stolen dump would show. */
async function dump(): Promise<string> {
  const tables = await api.sql<{ name: string }[]>`select table_name as name from information_schema.tables where table_schema = 'public'`
  const parts: string[] = []
  for (const { name } of tables) {
    const rows = await api.sql.unsafe(`select * from "${name}"`)
    parts.push(
      JSON.stringify(rows, (_k, v) => {
        if (v && typeof v === 'object' && (v instanceof Uint8Array || v.type === 'Buffer')) {
          const b = Buffer.from(v instanceof Uint8Array ? v : v.data)
          return `${b.toString('utf8')} ${b.toString('hex')} ${b.toString('base64')}`
        }
        return v
      }),
    )
  }
  return parts.join('\n')
}

describe('secrets at rest', () => {
  test('a database dump holds no usable session token, password, initial password, reset code or link token', async () => {
    const owner = await tenantOwner(api.url)
    const session = owner.client.cookie!.split('=')[1]!
    const email = uniqueEmail('dumped')
    expect((await owner.client.post('/users', { mode: 'create', role: 'viewer', email }, { 'idempotency-key': crypto.randomUUID() })).status).toBe(201)
    const initial = initialPasswordFrom((await mailTo(email, { subject: /Your account/ })).text)
    // A session created under an Idempotency-Key: its stored response carries the Set-Cookie.
    const again = new Client(api.url)
    expect((await again.post('/users', { email: uniqueEmail(), password: NEW_PASSWORD }, { 'idempotency-key': crypto.randomUUID() })).status).toBe(201)
    expect((await new Client(api.url).post('/password-resets', { email: owner.email })).status).toBe(202)
    const reset = await mailTo(owner.email, { subject: /Reset your/ })
    // Outbox rows, sent or not, hold their data only sealed.

    const text = await dump()
    const secrets = {
      session,
      secondSession: again.cookie!.split('=')[1]!,
      PASSWORD,
      NEW_PASSWORD,
      initial,
      code: codeFrom(reset.text),
      link: tokenFrom(reset.text),
    }
    for (const [what, secret] of Object.entries(secrets)) {
      for (const form of [secret, Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('base64')]) {
        expect({ what, found: text.includes(form) }).toEqual({ what, found: false })
      }
    }
    // The sanity check has teeth: the dump does hold the account's email.
    expect(text).toContain(owner.email)
  })
})
