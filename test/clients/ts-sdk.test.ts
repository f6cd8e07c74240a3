// The TypeScript SDK (clients/ts) against the real platform, as a platform engineer would use it: register, sign in
// with a cookie session, create a tenant, provision its storage, upload a model through the presigned URLs, build an
// edge package, download it and verify its SHA256SUMS and DSSE signature with nothing but the public key, register a
// webhook endpoint and verify a test event with the stock `standardwebhooks` package. Then the layer's behaviours on
// real answers (pages, ETags, replays, errors) and every example of docs/clients.md, run as written.
// The API and worker are the webhook tests' (a database of the file's own, a delivery dispatcher, a test CA).
import { describe, expect, test } from 'bun:test'
import { createHash, verify } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:https'
import { join } from 'node:path'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { createRcpClient, ifMatch, items, type paths, RcpError, type RcpClient, read, SessionJar } from '../../clients/ts'
import { PASSWORD, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { useDeliveryEnv } from '../webhooks/delivery-helpers'

const env = useDeliveryEnv({ WORKER_TASK_QUEUES: '' })
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

type Feature = paths['/v1/embodiment-profiles']['post']['requestBody']['content']['application/json']['observationFeatures'][number]
const STATE: Feature = { name: 'observation/state', dtype: 'float32', shape: [7], kind: 'state' }
const CAMERA: Feature = { name: 'observation/image', dtype: 'uint8', shape: [8, 8, 3], kind: 'image' }
const ACTIONS: Feature = { name: 'actions', dtype: 'float32', shape: [7], kind: 'action' }

/** What the flow made, for the later tests of the file. */
const made = {} as { email: string; token: string; pat: RcpClient; profileId: string }

/** A receiver of webhook deliveries on 127.0.0.1 over HTTPS (the test CA): each request's raw body and headers. */
function receiver() {
  const got: { raw: string; headers: Record<string, string> }[] = []
  const server = createServer({ key: readFileSync(env.certs.keyFile), cert: readFileSync(env.certs.certFile) }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      got.push({ raw: Buffer.concat(chunks).toString('utf8'), headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) })
      res.writeHead(204).end()
    })
  })
  return {
    got,
    url: () =>
      new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`https://127.0.0.1:${(server.address() as { port: number }).port}/hook`))),
    stop: () => server.close(),
  }
}

/** tar -xzf of the package into a scratch directory; its files, relative. */
function unpack(bytes: Uint8Array): { root: string; files: string[] } {
  const root = mkdtempSync(join(env.dir, 'pkg-'))
  writeFileSync(join(root, '..', `${root.split('/').pop()}.tar.gz`), bytes)
  const tar = Bun.spawnSync(['tar', '-xzf', `../${root.split('/').pop()}.tar.gz`], { cwd: root })
  if (tar.exitCode !== 0) throw new Error(tar.stderr.toString())
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((p) => statSync(join(root, p)).isFile())
    .sort()
  return { root, files }
}

describe('the TypeScript SDK against the platform', () => {
  test('register, sign in, tenant, storage, model, package (downloaded and verified), webhook test event (verified)', async () => {
    const baseUrl = env.api.url
    const email = uniqueEmail('sdk')

    // Register (a cookie session), then sign in again on a fresh client: the session is what the SDK keeps.
    await createRcpClient({ baseUrl, auth: { session: new SessionJar() } }).POST('/v1/users', { body: { email, password: PASSWORD } })
    const session = new SessionJar()
    const rcp = createRcpClient({ baseUrl, auth: { session } })
    const signedIn = await rcp.POST('/v1/sessions', { body: { email, password: PASSWORD } })
    expect(signedIn.data.data.session.state).toBe('active')
    expect(session.signedIn).toBe(true)
    // The same session's token as a bearer (rcp_ses_…): no cookie, no CSRF token.
    expect(session.cookie).toStartWith('rcp_ses_')
    const me = await createRcpClient({ baseUrl, auth: { token: session.cookie! } }).GET('/v1/users/me')
    expect(me.data.data.user.email).toBe(email)

    // A tenant (its Idempotency-Key added by the SDK), its storage provisioned, then a token for the rest.
    const tenant = await rcp.POST('/v1/tenants', { body: { name: 'SDK tenant', slug: uniqueSlug('sdk') } })
    expect(tenant.data.data.membership.role).toBe('owner')
    await rcp.PUT('/v1/tenants/current/storage-bucket', { body: { regionId: 'local' } })
    const buckets = await eventually('storage ready', async () => {
      const { data } = await rcp.GET('/v1/tenants/current/storage-bucket')
      return Object.values(data.data).every((b) => b?.status === 'ready') ? data.data : undefined
    })
    expect(buckets.bucket?.kind).toBe('general')
    const key = await rcp.POST('/v1/api-keys', { body: { name: 'sdk', scopes: ['model:read', 'model:write', 'tenant:read', 'tenant:manage'] } })
    const pat = createRcpClient({ baseUrl, auth: { token: key.data.data.token } })

    // A model: profile, version, the checkpoint PUT through its presigned URL, validated.
    const profile = await pat.POST('/v1/embodiment-profiles', {
      body: { name: 'sdk arm', robotType: 'so100', controlRateHz: 30, observationFeatures: [CAMERA, STATE], actionFeatures: [ACTIONS] },
    })
    const checkpoint = new Uint8Array(4096).map((_, i) => (i * 7) % 256)
    const path = 'checkpoints/sdk/params.bin'
    const version = await pat.POST('/v1/model-versions', {
      body: { name: 'sdk policy', format: 'openpi', source: { kind: 'imported_checkpoint', path, sizeBytes: checkpoint.length, sha256: sha256(checkpoint) } },
    })
    const modelVersionId = version.data.data.id
    const urls = await pat.POST('/v1/model-versions/{modelVersionId}/upload-urls', { params: { path: { modelVersionId } } })
    for (const u of urls.data.data.uploads) expect((await fetch(u.url, { method: 'PUT', body: checkpoint })).status).toBe(200)
    await pat.POST('/v1/model-versions/{modelVersionId}/validations', { params: { path: { modelVersionId } } })
    const ready = await eventually('model version settled', async () => {
      const { data } = await pat.GET('/v1/model-versions/{modelVersionId}', { params: { path: { modelVersionId } } })
      return ['ready', 'failed'].includes(data.data.status) ? data.data : undefined
    })
    expect([ready.status, ready.failureReason]).toEqual(['ready', null])

    // The package, built by the worker.
    const ordered = await pat.POST('/v1/model-versions/{modelVersionId}/edge-inference-package', {
      params: { path: { modelVersionId } },
      body: {
        embodimentProfileId: profile.data.data.id,
        mode: 'remote_ws',
        remotePolicyHost: '127.0.0.1',
        remotePolicyPort: 8000,
        targetArch: 'cpu',
        wireProtocols: ['openpi-ws'],
        steps: 4,
        useFakeTransport: true,
      },
    })
    const packageId = ordered.data.data.id
    const pkg = await eventually(
      'package built',
      async () => {
        const { data } = await pat.GET('/v1/edge-inference-packages/{packageId}', { params: { path: { packageId } } })
        return ['ready', 'failed'].includes(data.data.status) ? data.data : undefined
      },
      180_000,
    )
    expect([pkg.status, pkg.failureReason]).toEqual(['ready', null])

    // Downloaded, and checked against nothing but its own SHA256SUMS and the public signing key.
    const artifact = pkg.artifact!
    const bytes = new Uint8Array(await (await fetch(artifact.downloadUrl)).arrayBuffer())
    expect([bytes.length, sha256(bytes)]).toEqual([artifact.sizeBytes, artifact.sha256])
    const { root, files } = unpack(bytes)
    const sums = readFileSync(join(root, 'SHA256SUMS'), 'utf8').trim().split('\n')
    const listed = sums.map((line) => ({ digest: line.slice(0, 64), file: line.slice(66) }))
    expect(listed.map((l) => l.file).sort()).toEqual(files.filter((f) => f !== 'SHA256SUMS'))
    for (const l of listed) expect({ file: l.file, digest: sha256(readFileSync(join(root, l.file))) }).toEqual(l)
    const keys = await createRcpClient({ baseUrl }).GET('/v1/edge-inference-packages/signing-keys')
    const envelope = JSON.parse(readFileSync(join(root, 'provenance.intoto.jsonl'), 'utf8'))
    const signingKey = keys.data.data.find((k) => k.keyId === envelope.signatures[0].keyid)!
    const payload = Buffer.from(envelope.payload, 'base64')
    const pae = (body: Buffer) =>
      Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(envelope.payloadType)} ${envelope.payloadType} ${body.length} `), body])
    const signature = Buffer.from(envelope.signatures[0].sig, 'base64')
    expect(verify(null, pae(payload), signingKey.publicKeyPem, signature)).toBe(true)
    expect(verify(null, pae(Buffer.concat([payload, Buffer.from(' ')])), signingKey.publicKeyPem, signature)).toBe(false)
    const statement = JSON.parse(payload.toString('utf8')) as { subject: { name: string; digest: { sha256: string } }[] }
    for (const s of statement.subject) expect(s.digest.sha256).toBe(sha256(readFileSync(join(root, s.name))))
    rmSync(root, { recursive: true, force: true })

    // A webhook endpoint (the secret is in this answer only) and a test event, verified by the stock package.
    const hook = receiver()
    try {
      const endpoint = await pat.POST('/v1/webhook-endpoints', { body: { url: await hook.url(), events: ['edge_package.ready'] } })
      const { secret } = endpoint.data.data
      const sent = await pat.POST('/v1/webhook-endpoints/{endpointId}/test-events', { params: { path: { endpointId: endpoint.data.data.endpoint.id } } })
      const delivery = await eventually('the test event delivered', async () => hook.got[0])
      const event = new Webhook(secret).verify(delivery.raw, delivery.headers)
      expect(event).toMatchObject({ type: 'webhook_endpoint.test', tenantId: tenant.data.data.tenant.id })
      expect(sent.data.data.endpointId).toBe(endpoint.data.data.endpoint.id)
      expect(() => new Webhook(secret).verify(delivery.raw.replace('webhook_endpoint.test', 'webhook_endpoint.tesT'), delivery.headers)).toThrow(
        WebhookVerificationError,
      )
    } finally {
      hook.stop()
    }
    Object.assign(made, { email, token: key.data.data.token, pat, profileId: profile.data.data.id })
  }, 400_000)

  test('items() follows nextPageToken through a real list; a replayed create answers the first; errors carry the request id', async () => {
    const { pat } = made
    const names = Array.from({ length: 5 }, (_, i) => `paged ${i} ${crypto.randomUUID().slice(0, 6)}`)
    for (const name of names)
      await pat.POST('/v1/embodiment-profiles', {
        body: { name, robotType: 'so100', controlRateHz: 30, observationFeatures: [STATE], actionFeatures: [ACTIONS] },
      })
    const listed: string[] = []
    for await (const p of items(pat, '/v1/embodiment-profiles', { params: { query: { pageSize: 2 } } })) listed.push(p.name)
    expect(listed.filter((n) => names.includes(n)).sort()).toEqual([...names].sort())
    expect(listed).toHaveLength(names.length + 1) // and the flow's own profile: every page, no item twice

    const body = {
      name: `keyed ${crypto.randomUUID().slice(0, 6)}`,
      robotType: 'so100',
      controlRateHz: 30,
      observationFeatures: [STATE],
      actionFeatures: [ACTIONS],
    }
    const headers = { 'Idempotency-Key': crypto.randomUUID() }
    const first = await pat.POST('/v1/embodiment-profiles', { body, headers })
    const again = await pat.POST('/v1/embodiment-profiles', { body, headers })
    expect(again.data.data.id).toBe(first.data.data.id)
    expect(again.response.headers.get('idempotent-replayed')).toBe('true')

    const requestId = `sdk-${crypto.randomUUID()}` // the API echoes a caller's own id
    const missing = await pat
      .GET('/v1/model-versions/{modelVersionId}', { params: { path: { modelVersionId: crypto.randomUUID() } }, headers: { 'X-Request-Id': requestId } })
      .catch((e) => e)
    expect(missing).toBeInstanceOf(RcpError)
    expect([missing.status, missing.code, missing.requestId]).toEqual([404, 'MODEL_VERSION_NOT_FOUND', requestId])
    const invalid = await pat.POST('/v1/embodiment-profiles', { body: { ...body, controlRateHz: -1 } }).catch((e) => e)
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' })
    expect(invalid.errors.map((e: { path: string }) => e.path)).toContain('body.controlRateHz')
  })

  test('read() and ifMatch(): a change with the current ETag lands, one with a stale ETag is 412 PRECONDITION_FAILED', async () => {
    const { pat, profileId } = made
    const params = { path: { profileId } }
    const before = await read(pat, '/v1/embodiment-profiles/{profileId}', { params })
    await pat.PATCH('/v1/embodiment-profiles/{profileId}', { params, body: { controlRateHz: 50 }, headers: ifMatch(before.etag) })
    const after = await read(pat, '/v1/embodiment-profiles/{profileId}', { params })
    expect([after.data.data.controlRateHz, after.etag === before.etag]).toEqual([50, false])
    const stale = await pat.PATCH('/v1/embodiment-profiles/{profileId}', { params, body: { controlRateHz: 40 }, headers: ifMatch(before.etag) }).catch((e) => e)
    expect(stale).toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' })
  })
})

/** The ```ts blocks of docs/clients.md, in order. */
export function docExamples(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

describe('docs/clients.md', () => {
  test('every example type-checks against the generated types and runs as written, against the platform', async () => {
    const ROOT = join(import.meta.dir, '..', '..')
    const examples = docExamples(readFileSync(join(ROOT, 'docs', 'clients.md'), 'utf8'))
    expect(examples.length).toBeGreaterThanOrEqual(6)
    // At the repository's root, so `./clients/ts` resolves as the page writes it; `export {}` makes each a module.
    // Spawned without blocking: the API under test runs in this process.
    const run = async (cmd: string[], extra: Record<string, string> = {}) => {
      const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...extra }, stdout: 'pipe', stderr: 'pipe' })
      const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
      return { code, stdout, stderr }
    }
    const tag = `.docs-example-${process.pid}-${crypto.randomUUID().slice(0, 8)}`
    const files = examples.map((source, i) => {
      const file = join(ROOT, `${tag}-${i}.ts`)
      writeFileSync(file, `${source}export {}\n`)
      return file
    })
    const tsconfig = join(ROOT, `${tag}.tsconfig.json`)
    writeFileSync(tsconfig, JSON.stringify({ extends: './tsconfig.json', include: files.map((f) => f.slice(ROOT.length + 1)) }))
    try {
      const tsc = await run([join(ROOT, 'node_modules', '.bin', 'tsc'), '--noEmit', '--pretty', 'false', '-p', tsconfig])
      expect(tsc.stdout).toBe('')
      for (const [i, file] of files.entries()) {
        const ran = await run([process.execPath, file], { RCP_URL: env.api.url, RCP_TOKEN: made.token, RCP_EMAIL: made.email, RCP_PASSWORD: PASSWORD })
        expect({ example: i, code: ran.code, stderr: ran.stderr }).toEqual({ example: i, code: 0, stderr: '' })
        expect(ran.stdout.trim()).not.toBe('')
      }
    } finally {
      for (const f of [...files, tsconfig]) rmSync(f, { force: true })
    }
  }, 180_000)
})
