// Tenant deletion throughput: `bun bench/tenant-deletion.ts [--rows 200000] [--objects 5000] [--pat-rate 100]` plus the
// harness's flags (2 rounds by default; the issue's size is --rows 1000000 --objects 10000). Each round seeds a tenant
// with --rows rows spread over its real tables (events 40%, usage events 25%, webhook messages 15% with an attempt
// each, notifications 10%, memberships 5% with their users, mail 5%; by SQL in bulk) and a bucket with --objects
// objects, then deletes them twice, paired, on the same Postgres, MinIO and minio client: with the deletion job's own
// batches (activities/tenant-deletion: every table step in order, per batch a transaction that locks the job, asks for
// legal holds, deletes and moves the cursor; per 1,000 keys the keys written down, one multi-object delete, the count)
// and with bare baselines (per table `DELETE … WHERE ctid = ANY(ARRAY(SELECT ctid … WHERE tenant_id … LIMIT n))` until
// none is left; a loop of listObjects + removeObjects of 1,000 keys). Reports rows/s and objects/s and their ratios
// (target ≥ 70%), the resident set of this process (which runs the batches) before and at its peak during each
// measurement, and another tenant's PAT read (`GET /v1/tokens/self` against the API as its own process, open loop at
// --pat-rate/s from bench/open-loop.ts) while each deletion runs and for as long without one just before (p99 ≤ 20 ms).
// Results in bench/results/tenant-deletion.json.
import { join } from 'node:path'
import { deletionBatches } from '../activities/tenant-deletion/activities'
import type { ActivityDeps } from '../activities/deps'
import { loadConfig } from '../api/platform/config'
import { createDb, type Sql } from '../api/platform/db'
import { createLogger } from '../api/platform/log'
import { s3For } from '../api/storage/s3'
import { BUCKET_STEPS, TABLE_STEPS } from '../api/tenant-deletion/steps'
import { CACHE_DIR, freePort, newSecretKey, spawnChild, startMinio } from '../scripts/platform'
import { benchmark, ROOT, type Sample } from './harness'
import { patIn, seedMembers } from './rows'

const BATCH = 1000
const BARE_ROWS = 'bare DELETE … LIMIT 1000 batches'
const BARE_OBJECTS = 'bare removeObjects of 1,000 keys'
const MAX_P99_MS = 20
const say = (msg: string) => console.error(`[bench] ${msg}`)
class StopAtRows extends Error {}
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`

/** The resident set of this process (the one running the batches), sampled every 25 ms while `work` runs. */
async function rssDuring<T>(work: () => Promise<T>): Promise<{ result: T; startRss: number; peakRss: number }> {
  Bun.gc(true)
  const startRss = process.memoryUsage().rss
  let peakRss = startRss
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
  }, 25)
  try {
    const result = await work()
    return { result, startRss, peakRss: Math.max(peakRss, process.memoryUsage().rss) }
  } finally {
    clearInterval(timer)
  }
}

await benchmark('tenant-deletion', { rows: { type: 'string' }, objects: { type: 'string' }, 'pat-rate': { type: 'string' } }, async (h) => {
  const rows = Number(h.flags.rows ?? 200_000)
  const objects = Number(h.flags.objects ?? 5000)
  const patRate = Number(h.flags['pat-rate'] ?? 100)
  const minioDir = join(CACHE_DIR, 'bench-minio-deletion')
  const [minio, pg] = await Promise.all([
    startMinio({ dataDir: minioDir, port: await freePort(), consolePort: await freePort(), logFile: join(minioDir, 'minio.log') }),
    h.postgres(),
  ])
  h.own(minio)
  const sql: Sql = createDb(pg.url, { max: 4 })
  h.own({ stop: () => sql.end({ timeout: 5 }) })
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: pg.url,
    S3_ENDPOINT: minio.endpoint,
    S3_ACCESS_KEY: minio.accessKey,
    S3_SECRET_KEY: minio.secretKey,
    SECRET_KEY: newSecretKey(),
    TENANT_DELETION_BATCH_ROWS: String(BATCH),
    TENANT_DELETION_BATCH_OBJECTS: '1000',
  })
  // The benchmark hands the batches only what they read: the pool, the log and the configuration.
  const deps = { sql, config, log: createLogger('silent', { service: 'bench' }) } as unknown as ActivityDeps
  const { runBatches } = deletionBatches(deps)
  const s3 = s3For({ id: 'local', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })

  // Another tenant's reader, against the API as its own process on the same Postgres.
  const api = await h.api(pg.url, { env: { S3_ENDPOINT: minio.endpoint, S3_ACCESS_KEY: minio.accessKey, S3_SECRET_KEY: minio.secretKey } })
  const reader = await patIn(api, ['tenant:read'])
  /** Starts the open-loop PAT reads; the answer stops them and gives their figures. */
  const patLoad = () => {
    const child = spawnChild('open-loop', {
      cmd: [process.execPath, join(ROOT, 'bench/open-loop.ts')],
      pipe: true,
      env: {
        ...process.env,
        RCP_OPEN_LOOP: JSON.stringify({
          url: `${api.url}/v1/tokens/self`,
          headers: reader.headers,
          rate: patRate,
          seconds: 3600,
          timeoutMs: 5000,
          expect: 200,
          windowSeconds: 5,
        }),
      },
    })
    // The schedule starts once the warm-up's requests have gone out (the child prints `warm`).
    const lines = child.stdout!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const rest = (async () => {
      for (;;) {
        const { value, done } = await lines.read()
        if (done) return
        text += decoder.decode(value)
      }
    })()
    const errText = new Response(child.stderr).text()
    const warm = (async () => {
      while (!text.includes('warm\n')) {
        if (!child.running()) throw new Error(`bench/open-loop.ts exited: ${text}${await errText}`)
        await Bun.sleep(50)
      }
    })()
    const out = Promise.all([rest.then(() => text), errText])
    return {
      warm,
      stop: async () => {
        await child.stop()
        const [text, err] = await out
        const line = text.trim().split('\n').at(-1)
        if (!line?.startsWith('{')) throw new Error(`bench/open-loop.ts: ${text}${err}`)
        return JSON.parse(line) as { sent: number; outcomes: Record<string, number>; p50Ms: number; p99Ms: number; maxMs: number; perWindowP99: number[] }
      },
    }
  }
  const patFigures = (r: Awaited<ReturnType<ReturnType<typeof patLoad>['stop']>>) => {
    const { ok = 0, ...errors } = r.outcomes
    const failed = Object.entries(errors).map(([k, v]) => `${v} ${k}`)
    return `p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, max ${r.maxMs.toFixed(1)} ms over ${ok} reads${failed.length ? ` (${failed.join(', ')})` : ''}; p99 per 5 s ${r.perWindowP99.map((x) => x.toFixed(1)).join(', ')}`
  }
  /** The deletion `work` with the PAT reads running throughout, after as long a stretch of the same reads alone. */
  const underLoad = async (n: number, what: string, work: () => Promise<number>): Promise<Sample> => {
    const duringLoad = patLoad()
    await duringLoad.warm
    const t = performance.now()
    const measured = await rssDuring(work)
    const seconds = (performance.now() - t) / 1000
    const during = await duringLoad.stop()
    if (measured.result !== n) throw new Error(`deleted ${measured.result}, expected ${n}`)
    const idleLoad = patLoad()
    await idleLoad.warm
    await Bun.sleep(Math.max(3000, seconds * 1000))
    const idle = await idleLoad.stop()
    const note = `RSS ${mb(measured.startRss)} → peak ${mb(measured.peakRss)}; PAT reads during: ${patFigures(during)}; without: ${patFigures(idle)}`
    say(`${what}: ${note}`)
    return { rate: n / seconds, p50Ms: during.p50Ms, p99Ms: during.p99Ms, note }
  }
  const bare = async (n: number, what: string, work: () => Promise<number>): Promise<Sample> => {
    const t = performance.now()
    const measured = await rssDuring(work)
    if (measured.result !== n) throw new Error(`deleted ${measured.result}, expected ${n}`)
    const note = `RSS ${mb(measured.startRss)} → peak ${mb(measured.peakRss)}`
    say(`${what}: ${note}`)
    return { rate: n / ((performance.now() - t) / 1000), note }
  }

  const newTenant = async () => {
    const [t] = await sql<
      { id: string }[]
    >`insert into tenants (name, slug, lifecycle) values ('bench', ${`bench-${crypto.randomUUID()}`}, 'deleting') returning id`
    return t!.id
  }
  const share = (f: number) => Math.round(rows * f)
  /** The tenant's rows over its real tables, by SQL in bulk; answers how many rows of the step tables it holds. */
  const seedRows = async (tenantId: string) => {
    const t0 = performance.now()
    await seedMembers(pg.url, tenantId, share(0.05))
    await sql`
      insert into notifications (user_id, seq, tenant_id, kind, fields, dedupe_key)
      select m.user_id, k, ${tenantId}, 'membership.role_changed', '{"role":"viewer"}'::jsonb, 'bench-' || k
        from memberships m cross join generate_series(1, 2) k where m.tenant_id = ${tenantId} limit ${share(0.1)}`
    await sql`
      insert into events (tenant_id, type, data, dispatched_at)
      select ${tenantId}, 'training_job.failed', jsonb_build_object('reason', 'bench', 'trainingJobId', gen_random_uuid()), now()
        from generate_series(1, ${share(0.4)})`
    const [endpoint] = await sql<{ id: string }[]>`
      insert into webhook_endpoints (tenant_id, url, events, secret_sealed)
      values (${tenantId}, 'https://hooks.example.test/', '{training_job.failed}', '\\x00'::bytea) returning id`
    await sql`
      insert into webhook_messages (tenant_id, endpoint_id, event_id, event_type, status, attempt_count, last_attempt_at)
      select ${tenantId}, ${endpoint!.id}, e.id, e.type, 'succeeded', 1, now() from events e where e.tenant_id = ${tenantId} limit ${share(0.15)}`
    await sql`
      insert into webhook_attempts (message_id, endpoint_id, attempted_at, succeeded, response_status, duration_ms, response_body)
      select id, endpoint_id, now(), true, 200, 12, 'ok' from webhook_messages where tenant_id = ${tenantId}`
    await sql`
      insert into usage_events (tenant_id, meter, quantity, subject, occurred_at, idempotency_key, payload_hash)
      select ${tenantId}, 'api.requests', 1, 'GET /v1/tokens/self', now(), 'bench-' || i, sha256(i::text::bytea)
        from generate_series(1, ${share(0.25)}) i`
    await sql`
      insert into mail_outbox (tenant_id, recipient, template, sent_at)
      select ${tenantId}, 'member-' || i || '@example.test', 'invitation', now() from generate_series(1, ${share(0.05)}) i`
    await sql`analyze`
    let n = 0
    for (const table of TABLE_STEPS) {
      const [r] = await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from "${table}" where tenant_id = $1`, [tenantId])
      n += r!.n
    }
    say(`seeded ${n} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    return n
  }
  const seedBucket = async (bucket: string) => {
    await s3.makeBucket(bucket)
    let next = 0
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < objects) await s3.putObject(bucket, `obj/${next++}`, Buffer.from('x'))
      }),
    )
  }
  const job = async (tenantId: string, phase: 'rows' | 'buckets', stepIndex: number) => {
    const [j] = await sql<{ id: string }[]>`
      insert into tenant_deletion_jobs (tenant_id, trigger, status, claim, phase, step_index)
      values (${tenantId}, 'request', 'running', 'bench', ${phase}, ${stepIndex}) returning id`
    return { tenantId, jobId: j!.id }
  }

  const bareRows = async () => {
    const tenantId = await newTenant()
    const n = await seedRows(tenantId)
    return bare(n, BARE_ROWS, async () => {
      let total = 0
      for (const table of TABLE_STEPS) {
        for (;;) {
          const r = await sql.unsafe(`delete from "${table}" where ctid = any(array(select ctid from "${table}" where tenant_id = $1 limit ${BATCH}))`, [
            tenantId,
          ])
          if (r.count === 0) break
          total += r.count
        }
      }
      return total
    })
  }
  const jobRows = async () => {
    const tenantId = await newTenant()
    const n = await seedRows(tenantId)
    const input = await job(tenantId, 'rows', 0)
    return underLoad(n, 'deletion job, rows', async () => {
      await runBatches(input, 'bench', Number.POSITIVE_INFINITY, () => {})
      const [j] = await sql<{ n: number }[]>`
        select coalesce(sum(value::bigint), 0)::int as n from tenant_deletion_jobs, jsonb_each_text(counts) where id = ${input.jobId} and key like 'table:%'`
      return j!.n
    })
  }
  const bareObjects = async () => {
    const bucket = `rcp-bench-del-${crypto.randomUUID().slice(0, 8)}`
    await seedBucket(bucket)
    return bare(objects, BARE_OBJECTS, async () => {
      let total = 0
      for (;;) {
        const keys: string[] = []
        const stream = s3.listObjects(bucket, '', true)
        for await (const o of stream) {
          if (o.name) keys.push(o.name)
          if (keys.length >= 1000) break
        }
        stream.destroy()
        if (keys.length === 0) break
        await s3.removeObjects(bucket, keys)
        total += keys.length
      }
      await s3.removeBucket(bucket)
      return total
    })
  }
  const jobObjects = async () => {
    const tenantId = await newTenant()
    const bucket = `rcp-bench-del-${crypto.randomUUID().slice(0, 8)}`
    await seedBucket(bucket)
    await sql`
      insert into storage_buckets (tenant_id, kind, name, region_id, status, versioning) values (${tenantId}, 'general', ${bucket}, 'local', 'ready', false)`
    const input = await job(tenantId, 'buckets', BUCKET_STEPS.indexOf('general'))
    return underLoad(objects, 'deletion job, objects', async () => {
      await runBatches(input, 'bench', Number.POSITIVE_INFINITY, (p) => {
        // Only the bucket steps: the rows phase after them is jobRows's to measure.
        if (p.phase === 'rows') throw new StopAtRows()
      }).catch((err) => {
        if (!(err instanceof StopAtRows)) throw err
      })
      const [j] = await sql<{ n: number }[]>`select (counts ->> 'bucket:general')::int as n from tenant_deletion_jobs where id = ${input.jobId}`
      return j!.n
    })
  }
  say(`${rows} rows and ${objects} objects per measurement; PAT reads at ${patRate}/s`)
  return {
    baselines: [
      { name: BARE_ROWS, run: bareRows },
      { name: BARE_OBJECTS, run: bareObjects },
    ],
    rows: [
      { name: 'deletion job, rows', run: jobRows, target: 0.7, targetOf: BARE_ROWS, maxP99Ms: MAX_P99_MS },
      { name: 'deletion job, objects', run: jobObjects, target: 0.7, targetOf: BARE_OBJECTS, maxP99Ms: MAX_P99_MS },
    ],
    rounds: Number(h.flags.rounds ?? 2),
    paired: true,
  }
})
