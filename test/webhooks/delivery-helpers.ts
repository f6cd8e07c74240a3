// Shared by the webhook delivery tests: a test-made certificate authority, HTTPS receivers that verify with the
// stock `standardwebhooks` npm package, a Python receiver (PyPI standardwebhooks 1.1.0), a delivery worker with
// its own task-queue prefix (the runner's worker does not dispatch, see scripts/test.ts), and endpoint fixtures.
import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { publishEvent } from '../../api/events/service'
import type { EventData, EventType } from '../../api/events/catalogue'
import { loadConfig, type Config } from '../../api/platform/config'
import type { Resolver } from '../../api/platform/outbound/policy'
import { startWorker, type RunningWorker } from '../../worker/run'
import { startApi, type TestApi } from '../support/api'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'

/** A CA the test makes, and a server certificate it signed for localhost, 127.0.0.1 and 127.0.0.2. */
export function makeCertificates(dir: string) {
  const run = (...args: string[]) => {
    const r = Bun.spawnSync(['openssl', ...args], { cwd: dir })
    if (r.exitCode !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr.toString()}`)
  }
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  run('req', '-x509', ...ec, '-days', '1', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=rcp webhook test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign')
  run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost')
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:127.0.0.2\n')
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-out', 'server.pem', '-extfile', 'san.ext')
  return { caFile: join(dir, 'ca.pem'), keyFile: join(dir, 'server.key'), certFile: join(dir, 'server.pem') }
}

export interface Delivery {
  webhookId: string
  timestamp: number
  signatures: string[]
  body: { id: string; type: string; timestamp: string; tenantId: string; data: Record<string, unknown> }
  /** Which of the receiver's secrets verified it with the stock library. */
  verifiedBy: number[]
  at: number
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string }

/** An HTTPS receiver on 127.0.0.1 (or `host`). Every request is verified with `standardwebhooks` against each of
 *  `secrets` and recorded; `answer` decides the response (204 by default). It can go down and come back. */
export class Receiver {
  deliveries: Delivery[] = []
  secrets: string[] = []
  answer: (d: Delivery) => Answer = () => ({ status: 204 })
  /** How long each answer takes (a slow receiver). */
  delayMs = 0
  port = 0
  private server?: Server

  constructor(private certs: { keyFile: string; certFile: string }, private host = '127.0.0.1') {}

  async start(port = this.port): Promise<this> {
    this.server = createServer({ key: readFileSync(this.certs.keyFile), cert: readFileSync(this.certs.certFile) }, (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h] ?? '')]))
        const verifiedBy = this.secrets.flatMap((s, i) => {
          try {
            new Webhook(s).verify(raw, headers)
            return [i]
          } catch {
            return []
          }
        })
        const d: Delivery = {
          webhookId: headers['webhook-id']!, timestamp: Number(headers['webhook-timestamp']), signatures: headers['webhook-signature']!.split(' '),
          body: JSON.parse(raw), verifiedBy, at: Date.now(),
        }
        this.deliveries.push(d)
        const a = this.answer(d)
        setTimeout(() => res.writeHead(a.status, a.headers).end(a.body ?? ''), this.delayMs)
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(port, this.host, resolve))
    this.port = (this.server.address() as { port: number }).port
    return this
  }

  async stop() {
    const s = this.server
    this.server = undefined
    if (s) await new Promise<void>((resolve) => { s.close(() => resolve()); s.closeAllConnections() })
  }

  url(path = '/hook', host = this.host) {
    return `https://${host}:${this.port}${path}`
  }

  of(type: string) {
    return this.deliveries.filter((d) => d.body.type === type)
  }
}

/** The webhook tests' shared setup: certificates, an API and a delivery worker on a task-queue prefix of their own. */
export function useDeliveryEnv(overrides: Partial<Record<keyof Config, string>> = {}, opts: { resolve?: Resolver; worker?: Partial<Record<keyof Config, string>> } = {}) {
  const env = {} as { api: TestApi; worker: RunningWorker; config: Config; certs: ReturnType<typeof makeCertificates>; dir: string; prefix: string }
  beforeAll(async () => {
    env.dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'webhooks-'))
    env.certs = makeCertificates(env.dir)
    env.prefix = `rcp-wh-${crypto.randomUUID().slice(0, 8)}`
    const settings = {
      TEMPORAL_TASK_QUEUE_PREFIX: env.prefix, OUTBOUND_CA_FILE: env.certs.caFile, WEBHOOK_DISPATCHER: 'true',
      WEBHOOK_DISPATCH_POLL_MS: '250', WEBHOOK_RETRY_SCHEDULE: '0,200ms,400ms,800ms,1s,1s,2s,2s', ...overrides,
    }
    env.api = await startApi(settings)
    env.config = loadConfig({ ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...settings, ...opts.worker })
    env.worker = await startWorker(env.config, { sql: env.api.sql, schedules: false, resolve: opts.resolve })
  }, 120_000)
  afterAll(async () => {
    await env.worker?.shutdown()
    await env.api?.stop()
    if (env.dir) rmSync(env.dir, { recursive: true, force: true })
  })
  return env
}

/** A tenant owner with a tenant:manage PAT (the webhook routes' permission), and endpoint registration for it. */
export async function webhookTenant(api: TestApi) {
  const owner = await tenantOwner(api.url)
  const manager = owner.client.withBearer((await patFor(owner.client, ['tenant:manage'])).token)
  const register = (body: { url: string; events: string[]; rateLimitPerSecond?: number }) => registerEndpoint(manager, body)
  return { ...owner, manager, register }
}

export async function registerEndpoint(client: Client, body: { url: string; events: string[]; rateLimitPerSecond?: number }) {
  const res = await client.post('/webhook-endpoints', body)
  if (res.status !== 201) throw new Error(`endpoint registration failed: ${res.status} ${res.text}`)
  return { id: res.json.data.endpoint.id as string, secret: res.json.data.secret as string }
}

export const trainingDone = () => ({ trainingJobId: crypto.randomUUID(), name: 'pick-and-place', outputArtifactPath: 'runs/1/model.onnx' })

/** Publishes `count` events in one committed transaction (as a producer would). */
export async function publish<T extends EventType>(api: TestApi, tenantId: string, type: T, data: () => EventData<T>, count = 1) {
  return api.sql.begin(async (tx) => {
    const ids: string[] = []
    for (let i = 0; i < count; i++) ids.push((await publishEvent(tx, tenantId, type, data())).id)
    return ids
  })
}

export const messagesOf = (api: TestApi, endpointId: string) => api.sql<{ id: string; status: string; attempt_count: number; event_id: string }[]>`
  select id, status, attempt_count, event_id from webhook_messages where endpoint_id = ${endpointId} order by created_at, id`

/** Waits until every message of the endpoint has left `pending`. */
export async function settled(api: TestApi, endpointId: string, count: number, timeoutMs = 60_000) {
  return eventually(`${count} messages of ${endpointId} settled`, async () => {
    const rows = await messagesOf(api, endpointId)
    return rows.length === count && rows.every((r) => r.status !== 'pending') ? rows : undefined
  }, timeoutMs)
}

/** Distinct event ids a receiver got, of the given ones. */
export const receivedEventIds = (r: Receiver) => new Set(r.deliveries.map((d) => d.body.id))
