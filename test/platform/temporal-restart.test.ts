// The fault drill of Temporal: a Temporal dev server of this file's own, with its database in a file, is stopped
// in the middle of a burst of webhook deliveries and of a package build, and started again on the same port with
// the same database. The worker (worker/main.ts, its own process) and the API ride it out: every message reaches
// its receiver under one webhook-id, the build finishes once, and nothing is left pending anywhere.
// Postgres is this file's own too: the worker's dispatcher takes every undispatched event of its database.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, Connection } from '@temporalio/client'
import { createDb, type Sql } from '../../api/platform/db'
import { migrate } from '../../api/platform/migrate'
import {
  freePort,
  spawnChild,
  startPostgres,
  startTemporal,
  tail,
  waitUntil,
  type Child,
  type PostgresServer,
  type TemporalServer,
} from '../../scripts/platform'
import { startApi, type TestApi } from '../support/api'
import { patFor } from '../support/fixtures'
import { auditLeaks, otherScans } from '../support/secrets'
import { eventually } from '../support/temporal'
import { localS3, provisionedTenant } from '../storage/helpers'
import { makeProfile, makeVersion, packageIn } from '../edge-packages/helpers'
import { makeCertificates, publish, Receiver, registerEndpoint, trainingDone } from '../webhooks/delivery-helpers'

const EVENTS = 120
const OUTAGE_MS = 6000
const MODEL_BYTES = 128 * 1024 * 1024

const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'temporal-drill-'))
const certs = makeCertificates(dir)
const temporalPorts = { port: await freePort(), uiPort: await freePort(), httpPort: await freePort() }
const startOwnTemporal = () => startTemporal({ dbFile: join(dir, 'temporal.db'), ...temporalPorts, logFile: join(dir, 'temporal.log') })
const pgPort = await freePort()

let pg: PostgresServer
let temporal: TemporalServer
let sql: Sql
let api: TestApi
let worker: Child

beforeAll(async () => {
  ;[pg, temporal] = await Promise.all([
    startPostgres({ dataDir: join(dir, 'pg'), port: pgPort, database: 'rcp_temporal_drill', logFile: join(dir, 'postgres.log'), ephemeral: true, own: true }),
    startOwnTemporal(),
  ])
  sql = createDb(pg.url, { max: 4 })
  await migrate(sql)
  const settings = {
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE_PREFIX: `rcp-temporal-drill-${crypto.randomUUID().slice(0, 8)}`,
    OUTBOUND_CA_FILE: certs.caFile,
    WEBHOOK_DISPATCHER: 'true',
    WEBHOOK_DISPATCH_POLL_MS: '250',
    WEBHOOK_DISPATCH_BATCH: '20',
    WEBHOOK_RETRY_SCHEDULE: '0,500ms,1s,1s,2s,2s,3s,3s',
  }
  api = await startApi(settings)
  worker = spawnChild('drill-worker', {
    cmd: [process.execPath, 'worker/main.ts'],
    logFile: join(dir, 'worker.log'),
    env: { ...process.env, ...settings, LOG_LEVEL: 'info', METRICS: 'false' },
  })
  // Bundling the workflows takes most of a minute on a loaded machine.
  await waitUntil(worker, 'the worker polling', async () => readFileSync(worker.logFile, 'utf8').includes('"msg":"worker started"'), 150_000)
}, 180_000)

afterAll(async () => {
  await worker?.stop()
  await api?.stop()
  if (pg) otherScans.push(await auditLeaks(pg.url))
  await sql?.end({ timeout: 1 })
  await temporal?.stop()
  await pg?.stop()
})

describe('Temporal restarted during webhook deliveries and a package build', () => {
  test('every message delivered under one webhook-id, the build finished once, nothing left pending', async () => {
    const owner = await provisionedTenant(api.url)
    const manager = owner.client.withBearer((await patFor(owner.client, ['tenant:manage'])).token)
    const models = owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write'])).token)
    const receivers = await Promise.all([0, 1].map(() => new Receiver(certs).start()))
    const endpoints = await Promise.all(
      receivers.map((r) => registerEndpoint(manager, { url: r.url(), events: ['training_job.completed', 'edge_package.ready'] })),
    )
    receivers.forEach((r, i) => {
      r.secrets = [endpoints[i]!.secret]
    })

    const profileId = await makeProfile(sql, owner.tenantId)
    const version = await makeVersion(sql, owner.tenantId, owner.buckets.bucket!.name, { 'checkpoint.bin': MODEL_BYTES, 'config.json': Buffer.from('{}') })
    const exportBucket = owner.buckets.exportBucket!.name
    const s3 = localS3()
    const incompleteUploads = async () => {
      const found: string[] = []
      for await (const u of s3.listIncompleteUploads(exportBucket, '', true) as AsyncIterable<{ uploadId: string }>) found.push(u.uploadId)
      return found
    }

    // Both must be under way when the server goes: deliveries arriving and the archive's upload open. The receivers
    // answer slowly until then, so the burst is still arriving whenever the build reaches its upload, however fast
    // or slow the machine: started the other way round, a quick build finished before the first delivery and the
    // two never held at once.
    for (const r of receivers) r.delayMs = 2000
    const ids = await publish(api, owner.tenantId, 'training_job.completed', trainingDone, EVENTS)
    await eventually('the first delivery', async () => (receivers[0]!.deliveries.length >= 1 ? true : undefined), 240_000)
    const build = await models.post(`/model-versions/${version.id}/edge-inference-package`, { embodimentProfileId: profileId, mode: 'local' })
    expect(build.status).toBe(201)
    const packageId: string = build.json.data.id
    await eventually("the build's upload to be open", async () => ((await incompleteUploads()).length > 0 ? true : undefined), 240_000)
    const atStop = receivers.map((r) => r.deliveries.length)
    await temporal.stop()
    const downAt = performance.now()
    await Bun.sleep(OUTAGE_MS)
    const duringOutage = receivers.map((r) => r.deliveries.length)
    temporal = await startOwnTemporal()
    const upAt = performance.now()
    for (const r of receivers) r.delayMs = 30

    const pkg = await packageIn(models, packageId, ['ready', 'failed'], 300_000)
    const buildS = (performance.now() - upAt) / 1000
    const expected = EVENTS + 1 // the burst and edge_package.ready
    const done = await eventually(
      'every message succeeded',
      async () => {
        const [c] = await sql<{ succeeded: number; other: number }[]>`
        select count(*) filter (where status = 'succeeded')::int as succeeded, count(*) filter (where status <> 'succeeded')::int as other
          from webhook_messages where tenant_id = ${owner.tenantId}`
        return c!.succeeded === expected * endpoints.length ? c : undefined
      },
      300_000,
    )
    const deliveredS = (performance.now() - upAt) / 1000
    expect(done.other).toBe(0)
    expect(pkg.status).toBe('ready')

    // At the receivers: every event once per endpoint under one webhook-id; a redelivery repeats that id.
    const readyEvent = (await sql<{ id: string }[]>`select id from events where tenant_id = ${owner.tenantId} and type = 'edge_package.ready'`).map((e) => e.id)
    expect(readyEvent).toHaveLength(1)
    let redeliveries = 0
    for (const r of receivers) {
      const byEvent = new Map<string, Set<string>>()
      for (const d of r.deliveries) byEvent.set(d.body.id, (byEvent.get(d.body.id) ?? new Set()).add(d.webhookId))
      expect(new Set(byEvent.keys())).toEqual(new Set([...ids, ...readyEvent]))
      expect([...byEvent.values()].filter((s) => s.size !== 1)).toEqual([])
      expect(r.deliveries.every((d) => d.verifiedBy.length === 1)).toBe(true)
      redeliveries += r.deliveries.length - byEvent.size
    }

    // The build: one artifact, no multipart upload left, one ready and no failure announced.
    const objects: string[] = []
    for await (const o of s3.listObjectsV2(exportBucket, 'edge-packages/', true)) objects.push(o.name!)
    expect(objects).toEqual([`edge-packages/${packageId}/cpu.tar.gz`])
    expect(await incompleteUploads()).toEqual([])
    const announced = await sql<{ type: string }[]>`select type from events where tenant_id = ${owner.tenantId} and type like 'edge_package.%'`
    expect(announced.map((e) => e.type)).toEqual(['edge_package.ready'])

    // Nothing pending: no undispatched event, no pending message, no running workflow of the tenant.
    const [left] = await sql<{ undispatched: number; pending: number }[]>`
      select (select count(*)::int from events where tenant_id = ${owner.tenantId} and dispatched_at is null) as undispatched,
             (select count(*)::int from webhook_messages where tenant_id = ${owner.tenantId} and status = 'pending') as pending`
    expect(left).toEqual({ undispatched: 0, pending: 0 })
    const connection = await Connection.connect({ address: temporal.address })
    try {
      const client = new Client({ connection, namespace: temporal.namespace })
      const count = async (query: string) => (await client.workflow.count(query)).count
      const tenantQuery = `TenantId = '${owner.tenantId}'`
      const running = await eventually(
        'no running workflow of the tenant',
        async () => {
          const n = await count(`${tenantQuery} AND ExecutionStatus = 'Running'`)
          return n === 0 ? n : undefined
        },
        30_000,
      )
      const completed = await count(`${tenantQuery} AND ExecutionStatus = 'Completed'`)
      const failed = await count(`${tenantQuery} AND ExecutionStatus != 'Completed' AND ExecutionStatus != 'Running'`)
      expect(failed).toBe(0)
      expect({ workerRunning: worker.running(), log: worker.running() ? '' : tail(worker.logFile, 30) }).toEqual({ workerRunning: true, log: '' })
      console.error(
        `[drill] Temporal down ${((upAt - downAt) / 1000).toFixed(1)} s (deliveries at the stop ${atStop.join('+')}, during the outage ${duringOutage.join('+')}); ` +
          `after its return the build ready in ${buildS.toFixed(1)} s, all ${expected * endpoints.length} messages delivered in ${deliveredS.toFixed(1)} s; ` +
          `redeliveries of a webhook-id ${redeliveries}, events under two ids 0; artifacts 1; running workflows ${running}, completed ${completed}, failed ${failed}`,
      )
    } finally {
      await connection.close()
    }
    for (const r of receivers) await r.stop()
  }, 600_000)
})
