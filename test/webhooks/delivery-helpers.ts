// Shared by the webhook delivery tests: a test-made certificate authority, HTTPS receivers that verify with the
// stock `standardwebhooks` npm package, a Python receiver (PyPI standardwebhooks 1.1.0), a delivery worker with
// its own task-queue prefix (the runner's worker does not dispatch, see scripts/test.ts), and endpoint fixtures.
// The dispatcher claims every undispatched event of its database, so each file's API and worker use a database of the
// file's own (test/support/own-database.ts): the files run beside each other and beside the rest of the suite.
import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { publishEvent } from '../../api/events/service'
import type { EventData, EventType } from '../../api/events/catalogue'
import { loadConfig, type Config } from '../../api/platform/config'
import type { Resolver } from '../../api/platform/outbound/policy'
import { startWorker, type RunningWorker } from '../../worker/run'
import { startApi, type TestApi } from '../support/api'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { ownDatabase, type OwnDatabase } from '../support/own-database'
import { eventually } from '../support/temporal'
import { makeCertificates, type Receiver } from '../support/webhook-receiver'

export { makeCertificates, Receiver } from '../support/webhook-receiver'

/** The webhook tests' shared setup: certificates, an API and a delivery worker on a task-queue prefix of their own. */
export function useDeliveryEnv(
  overrides: Partial<Record<keyof Config, string>> = {},
  opts: { resolve?: Resolver; worker?: Partial<Record<keyof Config, string>> } = {},
) {
  const env = {} as { api: TestApi; worker: RunningWorker; config: Config; certs: ReturnType<typeof makeCertificates>; dir: string; prefix: string }
  let db: OwnDatabase | undefined
  beforeAll(async () => {
    db = await ownDatabase('webhooks')
    env.dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'webhooks-'))
    env.certs = makeCertificates(env.dir)
    env.prefix = `rcp-wh-${crypto.randomUUID().slice(0, 8)}`
    const settings = {
      DATABASE_URL: db.url,
      TEMPORAL_TASK_QUEUE_PREFIX: env.prefix,
      OUTBOUND_CA_FILE: env.certs.caFile,
      WEBHOOK_DISPATCHER: 'true',
      WEBHOOK_DISPATCH_POLL_MS: '250',
      WEBHOOK_RETRY_SCHEDULE: '0,200ms,400ms,800ms,1s,1s,2s,2s',
      // Delivery workflows only, unless the file says otherwise (`''`: every queue): a worker of every queue costs about
      // four times the CPU to start (docs/operations.md "Scaling out").
      WORKER_TASK_QUEUES: 'webhooks',
      ...overrides,
    }
    env.api = await startApi(settings)
    env.config = loadConfig({ ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...settings, ...opts.worker })
    env.worker = await startWorker(env.config, { sql: env.api.sql, schedules: false, resolve: opts.resolve })
  }, 120_000)
  afterAll(async () => {
    await env.worker?.shutdown()
    await env.api?.stop()
    if (env.dir) rmSync(env.dir, { recursive: true, force: true })
    await db?.scanAndDrop()
  })
  return env
}

/** A tenant owner with a tenant:manage PAT (the webhook routes' permission), and endpoint registration for it. */
export async function webhookTenant(api: Pick<TestApi, 'url'>) {
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

export const trainingDone = () => ({ trainingJobId: crypto.randomUUID(), name: 'pick-and-place', outputArtifactPath: 'runs/1/model.onnx', projectId: null })

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
  return eventually(
    `${count} messages of ${endpointId} settled`,
    async () => {
      const rows = await messagesOf(api, endpointId)
      return rows.length === count && rows.every((r) => r.status !== 'pending') ? rows : undefined
    },
    timeoutMs,
  )
}

/** Distinct event ids a receiver got, of the given ones. */
export const receivedEventIds = (r: Receiver) => new Set(r.deliveries.map((d) => d.body.id))
