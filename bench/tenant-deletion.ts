// Tenant deletion throughput: `bun bench/tenant-deletion.ts [--rows 200000] [--objects 5000]` plus the harness's flags
// (2 rounds by default). Each round seeds a tenant with --rows rows (in `events`, the table a busy tenant fills) and a
// bucket with --objects objects, then deletes them twice, in the same run, on the same Postgres, MinIO and minio client:
// with the deletion job's own batches (activities/tenant-deletion: per batch a transaction that locks the job, asks
// for legal holds, deletes and moves the cursor; per 1,000 keys the keys written down, one multi-object delete, the
// count) and with bare baselines (`DELETE … WHERE ctid = ANY(ARRAY(SELECT ctid … WHERE tenant_id … LIMIT n))` until
// none is left; a loop of listObjects + removeObjects of 1,000 keys). Reports rows/s and objects/s and their ratios
// (target ≥ 70%). Results in bench/results/tenant-deletion.json.
import { join } from 'node:path'
import { deletionBatches } from '../activities/tenant-deletion/activities'
import type { ActivityDeps } from '../activities/deps'
import { loadConfig } from '../api/platform/config'
import { createDb, type Sql } from '../api/platform/db'
import { createLogger } from '../api/platform/log'
import { s3For } from '../api/storage/s3'
import { BUCKET_STEPS, TABLE_STEPS } from '../api/tenant-deletion/steps'
import { CACHE_DIR, freePort, newSecretKey, startMinio } from '../scripts/platform'
import { benchmark } from './harness'

const BATCH = 1000
const BARE_ROWS = 'bare DELETE … LIMIT 1000 batches'
const BARE_OBJECTS = 'bare removeObjects of 1,000 keys'
const say = (msg: string) => console.error(`[bench] ${msg}`)

await benchmark('tenant-deletion', { rows: { type: 'string' }, objects: { type: 'string' } }, async (h) => {
  const rows = Number(h.flags.rows ?? 200_000)
  const objects = Number(h.flags.objects ?? 5000)
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

  const newTenant = async () => {
    const [t] = await sql<
      { id: string }[]
    >`insert into tenants (name, slug, lifecycle) values ('bench', ${`bench-${crypto.randomUUID()}`}, 'deleting') returning id`
    return t!.id
  }
  const seedRows = async (tenantId: string) => {
    await sql`
      insert into events (tenant_id, type, data, dispatched_at)
      select ${tenantId}, 'training_job.failed', '{"reason":"bench"}'::jsonb, now() from generate_series(1, ${rows})`
    await sql`analyze events`
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
  const timed = async (n: number, work: () => Promise<number>) => {
    const t = performance.now()
    const done = await work()
    if (done !== n) throw new Error(`deleted ${done}, expected ${n}`)
    return { rate: n / ((performance.now() - t) / 1000) }
  }

  const bareRows = async () => {
    const tenantId = await newTenant()
    await seedRows(tenantId)
    return timed(rows, async () => {
      let total = 0
      for (;;) {
        const r = await sql`delete from events where ctid = any(array(select ctid from events where tenant_id = ${tenantId} limit ${BATCH}))`
        if (r.count === 0) return total
        total += r.count
      }
    })
  }
  const jobRows = async () => {
    const tenantId = await newTenant()
    await seedRows(tenantId)
    const input = await job(tenantId, 'rows', TABLE_STEPS.indexOf('events'))
    return timed(rows, async () => {
      await runBatches(input, 'bench', Number.POSITIVE_INFINITY, () => {})
      const [j] = await sql<{ n: number }[]>`select (counts ->> 'table:events')::int as n from tenant_deletion_jobs where id = ${input.jobId}`
      return j!.n
    })
  }
  const bareObjects = async () => {
    const bucket = `rcp-bench-del-${crypto.randomUUID().slice(0, 8)}`
    await seedBucket(bucket)
    return timed(objects, async () => {
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
    return timed(objects, async () => {
      await runBatches(input, 'bench', Number.POSITIVE_INFINITY, () => {})
      const [j] = await sql<{ n: number }[]>`select (counts ->> 'bucket:general')::int as n from tenant_deletion_jobs where id = ${input.jobId}`
      return j!.n
    })
  }
  say(`${rows} rows and ${objects} objects per measurement`)
  return {
    baselines: [
      { name: BARE_ROWS, run: bareRows },
      { name: BARE_OBJECTS, run: bareObjects },
    ],
    rows: [
      { name: 'deletion job, rows', run: jobRows, target: 0.7, targetOf: BARE_ROWS },
      { name: 'deletion job, objects', run: jobObjects, target: 0.7, targetOf: BARE_OBJECTS },
    ],
    rounds: Number(h.flags.rounds ?? 2),
    paired: true,
  }
})
