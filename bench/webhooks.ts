// Webhook delivery: `bun bench/webhooks.ts [--events 1000] [--latency-events 200] [--latency-rate 4]` plus the
// harness's flags.
// One tenant, five endpoints on local HTTPS receivers (a CA the benchmark makes, trusted through OUTBOUND_CA_FILE),
// the real worker (dispatcher, delivery workflows, activities) against a Temporal dev server of its own.
// Baseline: start-to-complete throughput of a no-op workflow on the same server, started the way the dispatcher
// starts deliveries (32 starts in flight). Rows: deliveries/s of --events events fanned out to the five endpoints
// (target ≥ 70% of the baseline), and first-attempt latency from the publishing commit with events published one per
// commit at a steady --latency-rate events/s, well under the fan-out's capacity, so the figure is the pipeline's and
// not a queue's (target p50 < 1 s). Results in bench/results/webhooks.json.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { NativeConnection, Worker } from '@temporalio/worker'
import { publishEvent } from '../api/events/service'
import { loadConfig } from '../api/platform/config'
import { createDb } from '../api/platform/db'
import { deriveKeys } from '../api/platform/deps'
import { createLogger } from '../api/platform/log'
import { insertEndpoint } from '../api/webhook-endpoints/queries'
import { newSigningSecret, sealSecret } from '../api/webhook-endpoints/secrets'
import { freePort, LOOPBACK_CIDRS, newSecretKey, startTemporal } from '../scripts/platform'
import { makeCertificates, Receiver } from '../test/support/webhook-receiver'
import { startWorker } from '../worker/run'
import { TENANT_ID } from '../workflows/contract'
import { benchmark, RESULTS, type Sample } from './harness'

const ENDPOINTS = 5
const IN_FLIGHT = 32
const BASELINE = 'no-op workflow, start to complete'
const say = (msg: string) => console.error(`[bench] ${msg}`)
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!

await benchmark('webhooks', { events: { type: 'string' }, 'latency-events': { type: 'string' }, 'latency-rate': { type: 'string' } }, async (h) => {
  const events = Number(h.flags.events ?? 1000)
  const latencyEvents = Number(h.flags['latency-events'] ?? 200)
  const latencyRate = Number(h.flags['latency-rate'] ?? 4)
  const pg = await h.postgres()
  const temporal = await startTemporal({
    dbFile: join(h.scratch, 'temporal', 'temporal.db'),
    port: await freePort(),
    uiPort: await freePort(),
    httpPort: await freePort(),
    logFile: join(RESULTS, 'webhooks-temporal.log'),
    ephemeral: true,
  })
  h.own(temporal)
  const certDir = join(h.scratch, 'certs')
  mkdirSync(certDir)
  const certs = makeCertificates(certDir)
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    SECRET_KEY: newSecretKey(),
    TEMPORAL_TASK_QUEUE_PREFIX: 'rcp-bench',
    OUTBOUND_CA_FILE: certs.caFile,
    OUTBOUND_ALLOW_PRIVATE_CIDRS: LOOPBACK_CIDRS,
    LOG_LEVEL: 'warn',
  })
  const sql = createDb(pg.url, { max: 20 })
  h.own({ stop: () => sql.end({ timeout: 5 }) })
  const worker = await startWorker(config, { sql, schedules: false, log: createLogger('warn', { service: 'bench-worker' }) })
  h.own({ stop: () => worker.shutdown() })

  // The baseline's worker: the same server, its own queue, nothing but the no-op workflow.
  const connection = await NativeConnection.connect({ address: temporal.address })
  const noop = await Worker.create({
    connection,
    namespace: temporal.namespace,
    taskQueue: 'rcp-bench-noop',
    workflowsPath: join(import.meta.dir, 'noop-workflow.ts'),
  })
  const noopRun = noop.run()
  h.own({
    stop: async () => {
      noop.shutdown()
      await noopRun
      await connection.close()
    },
  })

  const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, () => new Receiver(certs).start()))
  h.own({
    stop: async () => {
      for (const r of receivers) await r.stop()
    },
  })
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('bench', ${`bench-${Date.now()}`}) returning id`
  const deps = { keys: deriveKeys(config.SECRET_KEY) }
  for (const r of receivers) {
    await insertEndpoint(sql, {
      tenantId: tenant!.id,
      url: r.url(),
      events: ['training_job.completed'],
      description: 'bench',
      rateLimitPerSecond: null,
      secretSealed: sealSecret(deps.keys, newSigningSecret()),
    })
  }
  const arrivals = new Map<string, number[]>()
  for (const r of receivers)
    r.answer = (d) => {
      arrivals.set(d.body.id, [...(arrivals.get(d.body.id) ?? []), d.at])
      return { status: 204 }
    }
  const data = () => ({ trainingJobId: crypto.randomUUID(), name: 'bench', outputArtifactPath: null })
  const allArrived = async (ids: string[], timeoutMs = 300_000) => {
    const deadline = Date.now() + timeoutMs
    while (!ids.every((id) => (arrivals.get(id)?.length ?? 0) >= ENDPOINTS)) {
      if (Date.now() > deadline) throw new Error('deliveries did not all arrive')
      await Bun.sleep(10)
    }
  }

  let round = 0
  // Completion is read from visibility, counted by the run's TenantId: a long poll per workflow (result()) would
  // run into the server's concurrent-poller limit long before 5,000.
  const noopThroughput = async (n = events * ENDPOINTS): Promise<Sample> => {
    const runId = `noop-${++round}-${Date.now()}`
    const t0 = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < n) {
          await worker.client.workflow.start('noopWorkflow', {
            taskQueue: 'rcp-bench-noop',
            workflowId: `${runId}-${next++}`,
            typedSearchAttributes: [{ key: TENANT_ID, value: runId }],
          })
        }
      }),
    )
    const query = `TenantId = '${runId}' AND ExecutionStatus = 'Completed'`
    // Each count scans the run's visibility rows on the same server: asked four times a second, it costs the
    // baseline little (at most 250 ms of a run of minutes) and does not load the server it measures.
    while ((await worker.client.workflow.count(query)).count < n) await Bun.sleep(250)
    return { rate: n / ((performance.now() - t0) / 1000) }
  }

  const fanOut = async (): Promise<Sample> => {
    const ids = await sql.begin(async (tx) => {
      const out: string[] = []
      for (let i = 0; i < events; i++) out.push((await publishEvent(tx, tenant!.id, 'training_job.completed', data())).id)
      return out
    })
    const t0 = performance.now()
    await allArrived(ids)
    const seconds = (performance.now() - t0) / 1000
    say(`${events * ENDPOINTS} deliveries in ${seconds.toFixed(1)} s`)
    return { rate: (events * ENDPOINTS) / seconds }
  }

  const latency = async (): Promise<Sample> => {
    const committedAt = new Map<string, number>()
    const t0 = performance.now()
    for (let i = 0; i < latencyEvents; i++) {
      const [id] = await sql.begin(async (tx) => [(await publishEvent(tx, tenant!.id, 'training_job.completed', data())).id])
      committedAt.set(id!, Date.now())
      await Bun.sleep(1000 / latencyRate) // a steady stream, not a burst
    }
    await allArrived([...committedAt.keys()])
    const seconds = (performance.now() - t0) / 1000
    const ms = [...committedAt].flatMap(([id, at]) =>
      arrivals
        .get(id)!
        .slice(0, ENDPOINTS)
        .map((a) => a - at),
    )
    return { rate: ms.length / seconds, p50Ms: quantile(ms, 0.5), p99Ms: quantile(ms, 0.99) }
  }

  await noopThroughput(500) // warm both workers' bundles, caches and connections
  return {
    baselines: [{ name: BASELINE, run: () => noopThroughput() }],
    rows: [
      { name: `deliveries (${events} events × ${ENDPOINTS} endpoints)`, run: fanOut, target: 0.7, targetOf: BASELINE },
      { name: `first attempt after the publishing commit (${latencyRate} events/s × ${ENDPOINTS})`, run: latency, maxP50Ms: 1000 },
    ],
  }
})
