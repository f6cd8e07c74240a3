// `rcp`, the command line (clients/cli), driven as a person drives it in a terminal: the binary is built once per run
// with `bun build --compile`, then spawned with a scratch HOME and XDG_CONFIG_HOME, its stdout read and its exit codes
// checked, against the real platform (the webhook tests' API and delivery worker: a database of the file's own, a
// test CA the platform trusts for the local receiver). Sign-in with a token, whoami, tenants switch, keys, a model
// upload interrupted and resumed, a package built and waited for, downloaded and verified (and tampered downloads
// refused with the verification exit code), webhooks listen receiving a test event, audit tail; then the examples of
// docs/cli.md, run as written.
import { beforeAll, describe, expect, test } from 'bun:test'
import { createHash, createHmac } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRcpClient, type RcpClient } from '../../clients/ts'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { localS3 } from '../storage/helpers'
import { useDeliveryEnv } from '../webhooks/delivery-helpers'

const env = useDeliveryEnv({ WORKER_TASK_QUEUES: '' })
const ROOT = join(import.meta.dir, '..', '..')
const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4, verification: 5, server: 6 }
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

const ctx = {} as {
  bin: string
  home: string
  ownerA: Awaited<ReturnType<typeof tenantOwner>> & { slug: string }
  slugB: string
  patA: string
  patB: string
  sdk: RcpClient
  modelVersionId: string
  packageId: string
}

type Ran = { code: number; stdout: string; stderr: string }

/** rcp with the scratch HOME: spawned without blocking, as the API under test runs in this process. */
async function rcp(args: string[], opts: { stdin?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<Ran> {
  const proc = Bun.spawn([ctx.bin, ...args], {
    cwd: opts.cwd ?? ctx.home,
    env: { PATH: process.env.PATH!, HOME: ctx.home, XDG_CONFIG_HOME: join(ctx.home, 'config'), ...opts.env },
    stdin: opts.stdin === undefined ? 'ignore' : new Blob([opts.stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  return { code, stdout, stderr }
}

/** rcp left running (a receiver, until it is stopped), its stderr read as it comes. */
function running(args: string[], home = ctx.home) {
  const proc = Bun.spawn([ctx.bin, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config') },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const reader = (proc.stderr as unknown as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  const r = {
    proc,
    stderr: '',
    /** Reads until `pattern` matches what it printed; its match. */
    async until(pattern: RegExp): Promise<RegExpExecArray> {
      while (!pattern.test(r.stderr)) r.stderr += decoder.decode((await reader.read()).value)
      return pattern.exec(r.stderr)!
    },
    /** Reads to its end; all it printed. */
    async rest(): Promise<string> {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) r.stderr += decoder.decode(chunk.value)
      return r.stderr
    },
  }
  return r
}

const json = (r: Ran) => {
  expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' })
  return JSON.parse(r.stdout)
}

/** Every secret rcp holds: none may appear in anything it prints. */
const secrets = () => [ctx.patA, ctx.patB]
const printsNoToken = (r: Ran) => {
  for (const s of secrets()) expect(`${r.stdout}\n${r.stderr}`).not.toContain(s)
}

beforeAll(async () => {
  ctx.home = mkdtempSync(join(env.dir, 'rcp-home-'))
  ctx.bin = join(env.dir, 'rcp')
  const built = Bun.spawn([process.execPath, 'build', '--compile', 'clients/cli/main.ts', '--outfile', ctx.bin], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [code, stderr] = await Promise.all([built.exited, new Response(built.stderr).text()])
  if (code !== 0) throw new Error(`bun build --compile failed: ${stderr}`)

  // Two tenants of one person: storage in the first, a token for each.
  const owner = await tenantOwner(env.api.url)
  const full = ['tenant:read', 'tenant:manage', 'apikey:read', 'apikey:write', 'model:read', 'model:write']
  ctx.patA = (await patFor(owner.client, full)).token
  ctx.sdk = createRcpClient({ baseUrl: env.api.url, auth: { token: ctx.patA } })
  ctx.ownerA = { ...owner, slug: (await ctx.sdk.GET('/v1/users/me')).data.data.currentMembership!.tenantSlug }
  await ctx.sdk.PUT('/v1/tenants/current/storage-bucket', { body: { regionId: 'local' } })
  ctx.slugB = `cli-b-${crypto.randomUUID().slice(0, 8)}`
  const b = await owner.client.post('/tenants', { name: 'CLI second tenant', slug: ctx.slugB })
  expect(b.status).toBe(201)
  ctx.patB = (await patFor(owner.client, ['tenant:read', 'apikey:read'])).token
  await eventually('storage ready', async () => {
    const { data } = await ctx.sdk.GET('/v1/tenants/current/storage-bucket')
    return Object.values(data.data).every((x) => x?.status === 'ready') ? true : undefined
  })
}, 180_000)

describe('rcp: signing in', () => {
  test('login --token keeps the token in the config dir (0700, file 0600) and never prints it; whoami reads it back', async () => {
    const login = await rcp(['login', '--token', ctx.patA, '--api', env.api.url])
    expect(login.code).toBe(EXIT.ok)
    expect(login.stdout).toContain(`Signed in to ${ctx.ownerA.slug}`)
    printsNoToken(login)
    const dir = join(ctx.home, 'config', 'rcp')
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toContain(ctx.patA)

    const who = await rcp(['whoami'])
    expect(who.code).toBe(EXIT.ok)
    expect(who.stdout).toContain(ctx.ownerA.email)
    expect(who.stdout).toContain(`${ctx.ownerA.slug} (owner)`)
    printsNoToken(who)
    const whoJson = await rcp(['whoami', '--json', '--verbose'])
    expect(json(whoJson)).toMatchObject({ user: { email: ctx.ownerA.email }, tenant: { slug: ctx.ownerA.slug }, credentialClass: 'personal_access_token' })
    expect(whoJson.stderr).toContain('> GET /v1/tokens/self') // --verbose names the requests, never their headers
    printsNoToken(whoJson)
  })

  test('a refused token is exit 3 and is not stored; no sign-in is exit 3; usage errors are exit 2', async () => {
    const bad = await rcp(['login', '--token', 'rcp_pat_notarealtoken', '--api', env.api.url])
    expect(bad.code).toBe(EXIT.auth)
    expect(bad.stderr).toContain('(401)')
    expect(bad.stderr).not.toContain('rcp_pat_notarealtoken')
    expect(readFileSync(join(ctx.home, 'config', 'rcp', 'config.json'), 'utf8')).not.toContain('notarealtoken')
    const fresh = mkdtempSync(join(env.dir, 'rcp-empty-'))
    expect((await rcp(['whoami'], { env: { HOME: fresh, XDG_CONFIG_HOME: join(fresh, 'c') } })).code).toBe(EXIT.auth)
    expect((await rcp(['keys', 'create', '--scopes', 'model:read'])).code).toBe(EXIT.usage)
    expect((await rcp(['whoami', '--colour'])).code).toBe(EXIT.usage)
    expect((await rcp(['frobnicate'])).code).toBe(EXIT.usage)
    // An API that cannot be reached: the server/network code.
    expect((await rcp(['login', '--token', ctx.patA, '--api', 'http://127.0.0.1:9'])).code).toBe(EXIT.server)
  })

  test('login --token - reads the token from stdin; tenants switch moves between the tenants rcp holds tokens for', async () => {
    const second = await rcp(['login', '--token', '-', '--json'], { stdin: `${ctx.patB}\n` })
    expect(json(second)).toMatchObject({ signedIn: true, tenantSlug: ctx.slugB })
    printsNoToken(second)
    expect(json(await rcp(['whoami', '--json'])).tenant.slug).toBe(ctx.slugB)
    const switched = await rcp(['tenants', 'switch', ctx.ownerA.slug])
    expect([switched.code, switched.stdout.trim()]).toEqual([EXIT.ok, `Now acting in ${ctx.ownerA.slug}`])
    expect(json(await rcp(['whoami', '--json'])).tenant.slug).toBe(ctx.ownerA.slug)
    // A tenant rcp holds no token for, with a token (bound to its tenant): not found
    const unknown = await rcp(['tenants', 'switch', 'no-such-tenant'])
    expect(unknown.code).toBe(EXIT.notFound)
    expect(unknown.stderr).toContain('no credential for tenant no-such-tenant')
  })
})

describe('rcp: keys', () => {
  test('keys create shows the new token once; list shows the key; revoke revokes it; a missing key is exit 4', async () => {
    const made = json(await rcp(['keys', 'create', '--name', 'ci deploy', '--scopes', 'model:read,tenant:read', '--json']))
    expect(made.token).toStartWith('rcp_pat_')
    expect(made.apiKey).toMatchObject({ name: 'ci deploy', scopes: ['model:read', 'tenant:read'] })
    const listed = await rcp(['keys', 'list'])
    expect(listed.code).toBe(EXIT.ok)
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+PREFIX\s+SCOPES\s+EXPIRES\s+REVOKED$/)
    const line = listed.stdout.split('\n').find((l) => l.startsWith(made.apiKey.id))!
    expect(line).toContain('ci deploy')
    expect(line).not.toContain(made.token)
    expect(line.trimEnd()).toEndWith('-') // not revoked
    const revoked = await rcp(['keys', 'revoke', made.apiKey.id])
    expect([revoked.code, revoked.stdout.trim()]).toEqual([EXIT.ok, `Revoked ${made.apiKey.id}`])
    const after = json(await rcp(['keys', 'list', '--json'])).find((k: { id: string }) => k.id === made.apiKey.id)
    expect(after.revokedAt).not.toBeNull()
    // The revoked token is refused by the API
    expect((await fetch(`${env.api.url}/v1/tokens/self`, { headers: { authorization: `Bearer ${made.token}` } })).status).toBe(401)
    const missing = await rcp(['keys', 'revoke', crypto.randomUUID()])
    expect(missing.code).toBe(EXIT.notFound)
    // Scopes beyond the API's catalogue: refused by the API (exit 1), naming the code
    const invalid = await rcp(['keys', 'create', '--name', 'x', '--scopes', 'model:fly'])
    expect([invalid.code, invalid.stderr]).toEqual([EXIT.failed, expect.stringContaining('VALIDATION_ERROR (400)')])
  })
})

describe('rcp: models and packages', () => {
  test('models upload: interrupted after its first object, a second run continues the same version and validates it', async () => {
    const folder = join(ctx.home, 'policy')
    mkdirSync(folder)
    const files: Record<string, Uint8Array> = {
      'a-config.json': new TextEncoder().encode(JSON.stringify({ model: 'pi0', steps: 4 })),
      'b-params.bin': new Uint8Array(48 << 20).map((_, i) => (i * 31 + 7) % 251),
      'c-norm.json': new TextEncoder().encode('{"mean":[0,0,0]}'),
    }
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(folder, name), bytes)
    const args = ['models', 'upload', folder, '--name', 'cli policy', '--format', 'openpi']

    // The first run is killed as soon as it reports its first object uploaded, while the 48 MiB one is under way.
    const first = Bun.spawn([ctx.bin, ...args], {
      cwd: ctx.home,
      env: { PATH: process.env.PATH!, HOME: ctx.home, XDG_CONFIG_HOME: join(ctx.home, 'config') },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    let seen = ''
    const decoder = new TextDecoder()
    for await (const chunk of first.stderr as unknown as AsyncIterable<Uint8Array>) {
      seen += decoder.decode(chunk)
      if (seen.includes('uploaded a-config.json')) {
        first.kill('SIGKILL')
        break
      }
    }
    expect(await first.exited).not.toBe(0)
    expect(seen).not.toContain('uploaded b-params.bin')
    const versionId = /Created model version ([0-9a-f-]{36})/.exec(seen)![1]!

    const second = await rcp([...args, '--json'])
    expect(second.stderr).toContain(`Resuming model version ${versionId}: 1 of 3 object(s) already uploaded`)
    expect(second.stderr).not.toContain('uploaded a-config.json') // not sent again
    expect(second.stderr).toContain('uploaded b-params.bin')
    const version = json(second)
    expect([version.id, version.status, version.failureReason]).toEqual([versionId, 'ready', null])
    // The state of the interrupted upload is gone once it is done
    expect(readdirSync(join(ctx.home, 'config', 'rcp', 'uploads'))).toEqual([])
    ctx.modelVersionId = versionId
  }, 180_000)

  test('packages build --wait follows the build to ready; download --verify checks SHA256SUMS and the DSSE signature', async () => {
    const profile = await ctx.sdk.POST('/v1/embodiment-profiles', {
      body: {
        name: 'cli arm',
        robotType: 'so100',
        controlRateHz: 30,
        observationFeatures: [{ name: 'observation/state', dtype: 'float32', shape: [7], kind: 'state' }],
        actionFeatures: [{ name: 'actions', dtype: 'float32', shape: [7], kind: 'action' }],
      },
    })
    const built = await rcp([
      'packages',
      'build',
      '--model-version',
      ctx.modelVersionId,
      '--profile',
      profile.data.data.id,
      '--mode',
      'remote_ws',
      '--remote-host',
      '127.0.0.1',
      '--remote-port',
      '8000',
      '--steps',
      '4',
      '--fake-transport',
      '--wait',
      '--json',
    ])
    const pkg = json({ ...built, stderr: '' })
    expect([pkg.status, pkg.failureReason]).toEqual(['ready', null])
    expect(built.stderr).toContain(`Package ${pkg.id} ready`)
    ctx.packageId = pkg.id

    const got = await rcp(['packages', 'download', pkg.id, '--verify', '--output', 'pkg.tar.gz'])
    expect([got.code, got.stderr]).toEqual([EXIT.ok, ''])
    expect(got.stdout).toContain('Signature verified with published key')
    const folder = join(ctx.home, 'pkg')
    // What rcp unpacked passes the stock tool too, and the archive is the one the API recorded
    const sums = Bun.spawnSync(['sha256sum', '--strict', '-c', 'SHA256SUMS'], { cwd: folder })
    expect(sums.exitCode).toBe(0)
    expect(sha256(readFileSync(join(ctx.home, 'pkg.tar.gz')))).toBe(pkg.artifact.sha256)
    expect(readFileSync(join(folder, 'model', 'b-params.bin')).equals(Buffer.from(readFileSync(join(ctx.home, 'policy', 'b-params.bin'))))).toBe(true)
  }, 400_000)

  test('a tampered package is refused with exit 5 and nothing of it is left: flipped byte, re-summed file, forged statement', async () => {
    const { sql } = env.api
    const [row] = await sql<{ artifact_bucket: string; artifact_key: string; sha256: string; size_bytes: string }[]>`
      select artifact_bucket, artifact_key, sha256, size_bytes from edge_packages where id = ${ctx.packageId}`
    const s3 = localS3()
    const original = readFileSync(join(ctx.home, 'pkg.tar.gz'))
    const put = async (bytes: Buffer, record: boolean) => {
      await s3.putObject(row!.artifact_bucket, row!.artifact_key, bytes)
      // An attacker who also rewrote the recorded digest: only the package's own checks remain
      if (record) await sql`update edge_packages set sha256 = ${sha256(bytes)}, size_bytes = ${bytes.length} where id = ${ctx.packageId}`
    }
    const download = async (name: string) => {
      const r = await rcp(['packages', 'download', ctx.packageId, '--verify', '--output', `${name}.tar.gz`])
      expect(existsSync(join(ctx.home, name))).toBe(false)
      expect(existsSync(join(ctx.home, `${name}.tar.gz`))).toBe(false)
      return r
    }
    /** The package unpacked, changed by `edit`, re-summed as an attacker would, packed again. */
    const repack = (edit: (dir: string) => void) => {
      const dir = mkdtempSync(join(env.dir, 'tamper-'))
      expect(Bun.spawnSync(['tar', '-xzf', join(ctx.home, 'pkg.tar.gz'), '-C', dir]).exitCode).toBe(0)
      edit(dir)
      const files = (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[])
        .filter((f) => f !== 'SHA256SUMS' && statSync(join(dir, f)).isFile())
        .sort()
      writeFileSync(join(dir, 'SHA256SUMS'), files.map((f) => `${sha256(readFileSync(join(dir, f)))}  ${f}\n`).join(''))
      expect(Bun.spawnSync(['tar', '-czf', join(dir, '..', 'tampered.tar.gz'), '-C', dir, '.']).exitCode).toBe(0)
      const bytes = readFileSync(join(dir, '..', 'tampered.tar.gz'))
      rmSync(dir, { recursive: true, force: true })
      return bytes
    }
    const changeParams = (dir: string) => {
      const file = join(dir, 'model', 'b-params.bin')
      const b = readFileSync(file)
      b[1000] = b[1000]! ^ 0xff
      writeFileSync(file, b)
    }
    try {
      // 1. One byte of the stored archive flipped: its SHA-256 is not the recorded one
      const flipped = Buffer.from(original)
      flipped[flipped.length >> 1] = flipped[flipped.length >> 1]! ^ 0x01
      await put(flipped, false)
      const one = await download('t1')
      expect([one.code, one.stderr]).toEqual([EXIT.verification, expect.stringContaining("verification failed: the archive's SHA-256")])

      // 2. A model file changed and SHA256SUMS rewritten to match (and the recorded digest too): the signed statement disagrees
      await put(repack(changeParams), true)
      const two = await download('t2')
      expect([two.code, two.stderr]).toEqual([EXIT.verification, expect.stringContaining('model/b-params.bin: the signed statement says SHA-256')])

      // 3. The statement rewritten to match as well: its signature no longer verifies with the published key
      const forged = repack((dir) => {
        changeParams(dir)
        const file = join(dir, 'provenance.intoto.jsonl')
        const envelope = JSON.parse(readFileSync(file, 'utf8'))
        const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'))
        for (const s of statement.subject) if (s.name === 'model/b-params.bin') s.digest.sha256 = sha256(readFileSync(join(dir, s.name)))
        envelope.payload = Buffer.from(JSON.stringify(statement)).toString('base64')
        writeFileSync(file, JSON.stringify(envelope))
      })
      await put(forged, true)
      const three = await download('t3')
      expect([three.code, three.stderr]).toEqual([EXIT.verification, expect.stringContaining('does not verify with the published key')])
    } finally {
      await put(original, true)
    }
    // Restored: verifies again
    expect((await rcp(['packages', 'download', ctx.packageId, '--verify', '--output', 'again.tar.gz'])).code).toBe(EXIT.ok)
    expect((await rcp(['packages', 'download', crypto.randomUUID(), '--verify'])).code).toBe(EXIT.notFound)
  }, 120_000)
})

describe('rcp: webhooks listen and audit tail', () => {
  test('webhooks listen --register receives the test event over HTTPS, verified with the endpoint secret, then removes the endpoint', async () => {
    const r = await rcp([
      'webhooks',
      'listen',
      '--register',
      '--events',
      'edge_package.ready',
      '--cert',
      env.certs.certFile,
      '--key',
      env.certs.keyFile,
      '--test-event',
      '--count',
      '1',
      '--json',
    ])
    // A removal that failed is said on stderr and fails the command.
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: EXIT.ok, stderr: expect.not.stringContaining('could not remove') })
    const event = JSON.parse(r.stdout.trim())
    expect(event).toMatchObject({ verified: true, event: { type: 'webhook_endpoint.test', tenantId: ctx.ownerA.tenantId } })
    expect(event.webhookId).toStartWith('msg_')
    const endpointId = /Registered endpoint ([0-9a-f-]{36})/.exec(r.stderr)![1]!
    const gone = await ctx.sdk.GET('/v1/webhook-endpoints/{endpointId}', { params: { path: { endpointId } } }).catch((e) => e)
    expect(gone?.status ?? (gone instanceof Error ? String(gone) : `no error: ${JSON.stringify(gone?.data)}`)).toBe(404)
  }, 120_000)

  test('an endpoint it cannot remove when it stops is said on stderr and fails the command', async () => {
    // A token of its own in a HOME of its own, revoked while rcp listens: the removal is refused (401).
    const made = await ctx.sdk.POST('/v1/api-keys', { body: { name: 'listen, revoked', scopes: ['tenant:manage'] } })
    const home = mkdtempSync(join(env.dir, 'rcp-home-revoked-'))
    const own = { HOME: home, XDG_CONFIG_HOME: join(home, 'config') }
    expect((await rcp(['login', '--token', made.data.data.token, '--api', env.api.url], { env: own })).code).toBe(EXIT.ok)
    const listen = running(
      ['webhooks', 'listen', '--register', '--events', 'edge_package.ready', '--cert', env.certs.certFile, '--key', env.certs.keyFile],
      home,
    )
    const endpointId = (await listen.until(/Registered endpoint ([0-9a-f-]{36})/))[1]!
    await ctx.sdk.DELETE('/v1/api-keys/{apiKeyId}', { params: { path: { apiKeyId: made.data.data.apiKey.id } } })
    listen.proc.kill('SIGINT')
    const stderr = await listen.rest()
    expect(await listen.proc.exited).toBe(EXIT.auth)
    expect(stderr).toContain(`could not remove endpoint ${endpointId}: TOKEN_REVOKED (401)`)
    // Still there, as it said: removed here.
    expect((await ctx.sdk.GET('/v1/webhook-endpoints/{endpointId}', { params: { path: { endpointId } } })).data.data.id).toBe(endpointId)
    await ctx.sdk.DELETE('/v1/webhook-endpoints/{endpointId}', { params: { path: { endpointId } } })
  }, 120_000)

  test('a delivery whose signature does not match is refused (401) and makes the exit code 5', async () => {
    const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64')}`
    const listen = running(['webhooks', 'listen', '--secret', secret, '--count', '1'])
    const { proc } = listen
    const url = (await listen.until(/Listening on (\S+)/))[1]!
    const body = JSON.stringify({ id: crypto.randomUUID(), type: 'webhook_endpoint.test', timestamp: new Date().toISOString(), data: {} })
    const sign = (key: string, id: string, ts: number) =>
      `v1,${createHmac('sha256', Buffer.from(key.replace(/^whsec_/, ''), 'base64'))
        .update(`${id}.${ts}.${body}`)
        .digest('base64')}`
    const now = Math.floor(Date.now() / 1000)
    const post = (signature: string, ts = now) =>
      fetch(url, { method: 'POST', body, headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': signature } })
    expect((await post(sign('whsec_d3Jvbmcgc2VjcmV0', 'msg_1', now))).status).toBe(401)
    expect((await post(sign(secret, 'msg_1', now - 600), now - 600)).status).toBe(401) // too old
    expect((await post(sign(secret, 'msg_1', now))).status).toBe(204)
    const [code, stdout] = await Promise.all([proc.exited, new Response(proc.stdout).text()])
    expect(code).toBe(EXIT.verification)
    expect(stdout).toContain('webhook_endpoint.test')
  })

  test('audit tail shows what rcp did, oldest first; --follow prints a new entry as it is written', async () => {
    const entries = json(await rcp(['audit', 'tail', '--limit', '200', '--json'])) as { action: string; occurredAt: string }[]
    const actions = entries.map((e) => e.action)
    expect(actions).toContain('api_key.created')
    expect(actions).toContain('api_key.revoked')
    expect(entries.map((e) => e.occurredAt)).toEqual([...entries.map((e) => e.occurredAt)].sort())
    const human = await rcp(['audit', 'tail', '--limit', '3', '--action', 'api_key'])
    expect(human.stdout.split('\n')[0]).toMatch(/^TIME\s+ACTION\s+OUTCOME\s+ACTOR\s+TARGET$/)

    const proc = Bun.spawn([ctx.bin, 'audit', 'tail', '--follow', '--limit', '1', '--interval-ms', '300'], {
      cwd: ctx.home,
      env: { PATH: process.env.PATH!, HOME: ctx.home, XDG_CONFIG_HOME: join(ctx.home, 'config') },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const reader = (proc.stdout as unknown as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    let out = ''
    while (!out.includes('\n')) out += decoder.decode((await reader.read()).value) // the latest entry first
    const key = await ctx.sdk.POST('/v1/api-keys', { body: { name: 'followed', scopes: ['model:read'] } })
    while (!out.includes(key.data.data.apiKey.id)) out += decoder.decode((await reader.read()).value)
    expect(out.split('\n').find((l) => l.includes(key.data.data.apiKey.id))).toContain('api_key.created')
    proc.kill('SIGINT')
    expect(await proc.exited).toBe(0)
  }, 60_000)
})

/** The ```sh blocks of docs/cli.md, in order. */
export function shellExamples(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

describe('docs/cli.md', () => {
  test('every example runs as written, with rcp on the PATH, against the platform', async () => {
    const examples = shellExamples(readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8'))
    expect(examples.length).toBeGreaterThanOrEqual(4)
    const home = mkdtempSync(join(env.dir, 'rcp-docs-'))
    const binDir = join(home, 'bin')
    mkdirSync(binDir)
    Bun.spawnSync(['ln', '-s', ctx.bin, join(binDir, 'rcp')])
    for (const [i, source] of examples.entries()) {
      const proc = Bun.spawn(['bash', '-euo', 'pipefail', '-c', source], {
        cwd: home,
        env: {
          PATH: `${binDir}:${process.env.PATH}`,
          HOME: home,
          RCP_API_URL: env.api.url,
          PAT: ctx.patA,
          PACKAGE_ID: ctx.packageId,
        },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
      expect({ example: i, code, stderr: code === 0 ? '' : stderr }).toEqual({ example: i, code: 0, stderr: '' })
      expect(stdout.trim()).not.toBe('')
      expect(stdout).not.toContain(ctx.patA)
    }
  }, 180_000)
})
