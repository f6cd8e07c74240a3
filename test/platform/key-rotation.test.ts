// Rotating SECRET_KEY (docs/operations.md "Key rotation"), as an operator does it: add a new key in front, re-seal, remove the
// old key. Afterwards every sealed secret still works, and the database never held one in plaintext.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { publicSigningKeys } from '../../api/edge-packages/signing'
import { SEALED_COLUMNS } from '../../activities/reseal-batch'
import { loadConfig } from '../../api/platform/config'
import { deriveKeys, open, sealedKeyId } from '../../api/platform/keyring'
import { createLogger } from '../../api/platform/log'
import { enqueueMail } from '../../api/mail/service'
import { signedHeaders } from '../../api/webhook-deliveries/signing'
import { signingSecrets } from '../../api/webhook-endpoints/secrets'
import { freePort, newSecretKey } from '../../scripts/platform'
import { startWorker, type RunningWorker } from '../../worker/run'
import { SYSTEM_TENANT, TENANT_ID } from '../../workflows/contract'
import { RESEAL_PROGRESS_QUERY, resealWorkflowId, type ResealProgress } from '../../workflows/contract-keys'
import { runReseal } from '../../scripts/reseal'
import { codeAt, enrolTotp, signIn } from '../mfa/helpers'
import { startApi, type TestApi } from '../support/api'
import { releaseChromium, sharedChromium } from '../support/chromium'
import { Client } from '../support/client'
import { patFor, signedUpUser, tenantOwner, uniqueEmail } from '../support/fixtures'
import { browserSignIn, CLIENT_ID, CLIENT_SECRET, startOidcProvider, type TestProvider } from '../support/oidc'

const OLD = newSecretKey()
const NEW = newSecretKey()
let port: number
let provider: TestProvider
let browser: Browser
let api: TestApi | undefined

/** The API on the same port each time (the provider knows one redirect URI), with `secretKey` as its keyring. */
async function apiWith(secretKey: string): Promise<TestApi> {
  await api?.stop()
  api = await startApi({ SECRET_KEY: secretKey, PORT: String(port) })
  return api
}

beforeAll(async () => {
  port = await freePort()
  provider = await startOidcProvider(`http://127.0.0.1:${port}`)
  browser = await sharedChromium()
})
afterAll(async () => {
  await api?.stop()
  await releaseChromium(browser)
  provider?.stop()
})

/** Tables (and rows) whose text form holds `needle`, or its bytes in a bytea column. */
async function tablesHolding(a: TestApi, needle: string): Promise<string[]> {
  const tables = await a.sql<{ name: string }[]>`select tablename as name from pg_tables where schemaname = 'public'`
  const hex = Buffer.from(needle).toString('hex')
  const found: string[] = []
  for (const { name } of tables) {
    const [row] = await a.sql<
      { n: number }[]
    >`select count(*)::int as n from ${a.sql(name)} t where strpos(t::text, ${needle}) > 0 or strpos(t::text, ${hex}) > 0`
    if (row!.n > 0) found.push(name)
  }
  return found
}

/** `bun scripts/reseal.ts` as docs/operations.md runs it, with a worker of the same keyring on the queue it names. */
async function resealCommand(secretKey: string): Promise<{ stdout: string; exitCode: number }> {
  const env = {
    ...process.env,
    SECRET_KEY: secretKey,
    TEMPORAL_TASK_QUEUE_PREFIX: `rcp-keys-${crypto.randomUUID().slice(0, 8)}`,
    WORKER_TASK_QUEUES: 'keys',
    LOG_LEVEL: 'silent',
  }
  const worker = await startWorker(loadConfig(env), { schedules: false, log: createLogger('silent') })
  try {
    const proc = Bun.spawn([process.execPath, 'scripts/reseal.ts'], { env, stdout: 'pipe', stderr: 'pipe' })
    const [stdout, exitCode] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    return { stdout, exitCode }
  } finally {
    await worker.shutdown()
  }
}

async function reseal(secretKey: string): Promise<ResealProgress['totals']> {
  const config = loadConfig({
    ...process.env,
    SECRET_KEY: secretKey,
    TEMPORAL_TASK_QUEUE_PREFIX: `rcp-keys-${crypto.randomUUID().slice(0, 8)}`,
    WORKER_TASK_QUEUES: 'keys',
    LOG_LEVEL: 'silent',
  })
  let worker: RunningWorker | undefined
  try {
    worker = await startWorker(config, { schedules: false, log: createLogger('silent') })
    // Small batches, so every column's cursor is carried across batches; but the re-seal walks the whole database, which
    // in the full suite holds every other file's sealed rows too (thousands of idempotent answers): an activity per two
    // rows there outlasted the test's timeout. At most about 100 batches for the largest table, whatever its size.
    const tables = [...new Set(SEALED_COLUMNS.map((c) => c.name.split('.')[0]!))]
    const { sql } = api!
    let largest = 0
    for (const t of tables) largest = Math.max(largest, (await sql<{ n: number }[]>`select count(*)::int as n from ${sql(t)}`)[0]!.n)
    const totals = await runReseal(config, worker.client, { batchSize: Math.max(2, Math.ceil(largest / 100)) })
    const run = worker.client.workflow.getHandle(resealWorkflowId(deriveKeys(secretKey).id))
    expect((await run.query<ResealProgress>(RESEAL_PROGRESS_QUERY)).done).toBe(true)
    expect((await run.describe()).typedSearchAttributes.get(TENANT_ID)).toBe(SYSTEM_TENANT)
    return totals
  } finally {
    await worker?.shutdown()
  }
}

describe('key rotation', () => {
  test('add a key, re-seal, remove the old one: webhooks sign, SSO and TOTP sign in, idempotent answers replay; no plaintext ever stored', async () => {
    // Before: one key. Every kind of sealed value, made through the API.
    let a = await apiWith(OLD)
    const owner = await tenantOwner(a.url)
    const created = await owner.client.post(
      '/webhook-endpoints',
      { url: 'https://127.0.0.1:9443/hooks/rotation', events: ['run.finished'] },
      { 'idempotency-key': 'rotation-endpoint' },
    )
    expect(created.status).toBe(201)
    const { endpoint, secret: webhookSecret } = created.json.data
    const sso = await owner.client.post('/tenants/current/sso-connections', {
      issuer: provider.issuer,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      emailDomains: ['example.test'],
      defaultRole: 'researcher',
    })
    expect(sso.status).toBe(201)
    const mfaUser = await signedUpUser(a.url)
    const { secret: totpSecret } = await enrolTotp(mfaUser.client)
    const members = await owner.client.get('/tenants/current/members?pageSize=1')
    const oldPageToken = members.json.nextPageToken as string | undefined
    const oldCsrf = owner.client.csrf
    const { token } = await patFor(owner.client, ['tenant:read', 'tenant:manage'])
    const robot = new Client(a.url).withBearer(token)

    // The new key goes in front; the old one still verifies and opens everything.
    a = await apiWith(`${NEW},${OLD}`)
    expect((await owner.client.get(`/webhook-endpoints/${endpoint.id}`)).status).toBe(200)
    expect(owner.client.csrf).toBe(oldCsrf)
    expect((await owner.client.patch(`/webhook-endpoints/${endpoint.id}`, { description: 'csrf made with the old key' })).status).toBe(200)
    if (oldPageToken) expect((await owner.client.get(`/tenants/current/members?pageSize=1&pageToken=${encodeURIComponent(oldPageToken)}`)).status).toBe(200)
    // Without the re-seal, removing the old key would strand every value it sealed: that is what the re-seal is for.
    const [stale] = await a.sql<{ s: Buffer }[]>`select secret_sealed as s from webhook_endpoints where id = ${endpoint.id}`
    expect(sealedKeyId(stale!.s)).toBe(deriveKeys(OLD).id)
    expect(() => open(deriveKeys(NEW), 'secrets', stale!.s)).toThrow()

    // A value sealed with a key that already left the list cannot be opened by any retry: counted, left alone.
    const stranded = await a.sql.begin((tx) =>
      enqueueMail(tx, { to: uniqueEmail('stranded'), template: 'initialPassword', data: { password: 'x', tenantName: 'Gone' } }, deriveKeys(newSecretKey())),
    )
    const strandedBytes = async () => (await a.sql<{ s: Buffer }[]>`select sealed_data as s from mail_outbox where id = ${stranded.id}`)[0]!.s
    const before = await strandedBytes()

    const totals = await reseal(`${NEW},${OLD}`)
    expect(totals['mail_outbox.sealed_data']!.unreadable).toBeGreaterThanOrEqual(1)
    expect(await strandedBytes()).toEqual(before)
    expect(Object.keys(totals).sort()).toEqual(SEALED_COLUMNS.map((c) => c.name).sort())
    for (const name of [
      'totp_factors.secret_sealed',
      'sso_connections.client_secret_sealed',
      'webhook_endpoints.secret_sealed',
      'idempotency_keys.response_body',
    ]) {
      expect(totals[name]!.resealed).toBeGreaterThanOrEqual(1)
    }
    // A second run finds nothing left to do.
    // A second run, as docs/operations.md has the operator start it, re-seals nothing; the stranded value makes it exit 1
    // with what to do about it.
    const again = await resealCommand(`${NEW},${OLD}`)
    expect(again.stdout).not.toMatch(/re-sealed [1-9]/)
    expect(again.stdout).toMatch(/mail_outbox\.sealed_data +scanned \d+, re-sealed 0, changed meanwhile 0, unreadable [1-9]/)
    expect(again.stdout).toContain('put that key back')
    expect(again.exitCode).toBe(1)
    // Other test files' values in this database are sealed with the runner's key, outside this ring: counted as
    // unreadable and left alone. None is left under the old key.
    for (const column of SEALED_COLUMNS) {
      for (const row of await column.batch(a.sql, null, 100_000)) expect(sealedKeyId(row.sealed)).not.toBe(deriveKeys(OLD).id)
    }

    // The old key leaves. Everything still works.
    a = await apiWith(NEW)
    const [row] = await a.sql<{ secret_sealed: Buffer; previous_secret_sealed: Buffer | null; previous_secret_expires_at: Date | null }[]>`
      select secret_sealed, previous_secret_sealed, previous_secret_expires_at from webhook_endpoints where id = ${endpoint.id}`
    const at = new Date()
    const body = JSON.stringify({ type: 'run.finished', data: {} })
    const headers = signedHeaders(signingSecrets(a.deps, row!, at), 'msg_rotation', at, body)
    expect(new Webhook(webhookSecret).verify(body, headers)).toEqual(JSON.parse(body))

    // The session lives on (its token is random, not derived), but its CSRF token was a MAC under the removed key:
    // an unsafe request needs a fresh sign-in. docs/operations.md's procedure keeps the old key a session lifetime for this.
    expect((await owner.client.patch(`/webhook-endpoints/${endpoint.id}`, { description: 'after removal' })).json.code).toBe('CSRF_INVALID')

    const replay = await robot.post(
      '/webhook-endpoints',
      { url: 'https://127.0.0.1:9443/hooks/rotation', events: ['run.finished'] },
      { 'idempotency-key': 'rotation-endpoint' },
    )
    expect(replay.status, replay.text).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.json.data.secret).toBe(webhookSecret)

    const challenged = await signIn(a.url, mfaUser.email)
    const confirmed = await challenged.client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: challenged.session.mfaChallenge.id,
      method: 'totp',
      code: await codeAt(totpSecret),
    })
    expect(confirmed.status).toBe(201)

    const email = uniqueEmail('rotated-sso')
    const done = await browserSignIn(browser, a.url, `${a.url}/v1/auth/sso/${sso.json.data.id}/start`, email)
    expect(done.status).toBe(303)
    const ssoClient = new Client(a.url)
    ssoClient.cookie = `rcp_session=${done.session}`
    expect((await ssoClient.get('/users/me')).json.data.user.email).toBe(email)

    // A page token signed with the removed key is refused as any foreign token is.
    if (oldPageToken)
      expect((await owner.client.get(`/tenants/current/members?pageSize=1&pageToken=${encodeURIComponent(oldPageToken)}`)).json.code).toBe('PAGE_TOKEN_INVALID')

    for (const secret of [webhookSecret, CLIENT_SECRET, totpSecret]) expect(await tablesHolding(a, secret)).toEqual([])
  }, 120_000)

  test('every bytea column is re-sealed or holds a digest: a new sealed column cannot be forgotten', async () => {
    const a = api ?? (await apiWith(NEW))
    const columns = await a.sql<{ name: string }[]>`
      select table_name || '.' || column_name as name from information_schema.columns where table_schema = 'public' and data_type = 'bytea'`
    const resealed = new Set(SEALED_COLUMNS.map((c) => c.name))
    const others = columns.map((c) => c.name).filter((n) => !resealed.has(n))
    // Digests and MACs (token hashes, the audit chain, throttle keys, retired credentials' digests) and public keys
    // need no re-seal; nor an audit entry's personal nonce, which only salts the personal part stored beside it and is
    // blanked with it.
    expect(others.filter((n) => !/\.(\w+_)?(hash|key|digest|nonce)$/.test(n))).toEqual([])
    expect([...resealed].filter((n) => !columns.some((c) => c.name === n))).toEqual([])
  })

  test('without PACKAGE_SIGNING_KEY the signing key follows the current key, and the earlier keys stay listed', () => {
    const keysOf = (secretKey: string) => publicSigningKeys({ SECRET_KEY: secretKey, PACKAGE_SIGNING_KEY: undefined, PACKAGE_SIGNING_PREVIOUS_PUBLIC_KEYS: '' })
    const [before] = keysOf(OLD)
    const rotated = keysOf(`${NEW},${OLD}`)
    expect(rotated.map((k) => k.current)).toEqual([true, false])
    expect(rotated[0]!.keyId).not.toBe(before!.keyId)
    expect(rotated[1]!.publicKeyBase64).toBe(before!.publicKeyBase64)
  })

  test('SECRET_KEY refuses a malformed or repeated key', () => {
    expect(() => loadConfig({ ...process.env, SECRET_KEY: `${NEW},not-a-key` })).toThrow(/32 bytes/)
    expect(() => loadConfig({ ...process.env, SECRET_KEY: `${NEW},${NEW}` })).toThrow(/twice/)
  })
})
