// Reconciliation throughput: `bun bench/reconcile.ts [--objects 100000]` plus the harness's flags (3 rounds by default).
// Walks one bucket of --objects objects with the reconciliation walk (S3 listing merged with expected rows in Postgres,
// findings written) and with a bare listObjectsV2 stream of the same bucket, alternating, in the same run, and reports
// objects/s of each and their ratio (target: reconciliation ≥ 70% of the bare walk). The MinIO data lives in
// ~/.cache/rcp/bench-minio, so the objects are uploaded once and reused by later runs. Results in bench/results/reconcile.json.
import { join } from 'node:path'
import { walkAndCompare } from '../activities/storage-reconcile'
import { createDb } from '../api/platform/db'
import { s3For } from '../api/storage/s3'
import { CACHE_DIR, freePort, startMinio } from '../scripts/platform'
import { benchmark } from './harness'

const BUCKET = 'rcp-bench-reconcile'
const BARE = 'bare listObjectsV2 walk'
const key = (i: number) => `obj/${String(i).padStart(8, '0')}`
const say = (msg: string) => console.error(`[bench] ${msg}`)

async function ensureObjects(s3: ReturnType<typeof s3For>, objects: number) {
  if (!(await s3.bucketExists(BUCKET))) await s3.makeBucket(BUCKET)
  const present = new Set<string>()
  for await (const o of s3.listObjectsV2(BUCKET, '', true)) if (o.name) present.add(o.name)
  const missing = Array.from({ length: objects }, (_, i) => key(i)).filter((k) => !present.has(k))
  if (missing.length === 0) return say(`bucket ${BUCKET} already holds ${objects} objects`)
  say(`uploading ${missing.length} objects (kept for later runs)`)
  const t = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: 128 }, async () => {
      while (next < missing.length) await s3.putObject(BUCKET, missing[next++]!, Buffer.from('x'))
    }),
  )
  say(`uploaded in ${((performance.now() - t) / 1000).toFixed(1)} s`)
}

await benchmark('reconcile', { objects: { type: 'string' } }, async (h) => {
  const objects = Number(h.flags.objects ?? 100_000)
  const minioDir = join(CACHE_DIR, 'bench-minio')
  const [minio, pg] = await Promise.all([
    startMinio({ dataDir: minioDir, port: await freePort(), consolePort: await freePort(), logFile: join(minioDir, 'minio.log') }),
    h.postgres(),
  ])
  h.own(minio)
  const sql = createDb(pg.url, { max: 4 })
  h.own({ stop: () => sql.end({ timeout: 5 }) })
  const s3 = s3For({ id: 'bench', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })
  await ensureObjects(s3, objects)

  // The records know all but the last 1% of the objects, plus 500 the bucket lacks: both kinds of finding.
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('bench', ${`bench-${Date.now()}`}) returning id`
  const known = Math.floor(objects * 0.99)
  await sql`
    insert into storage_expected_objects (tenant_id, bucket, key, kind)
    select ${tenant!.id}::uuid, ${BUCKET}, 'obj/' || lpad(i::text, 8, '0'), 'artifact' from generate_series(0, ${known - 1}) i
    union all select ${tenant!.id}::uuid, ${BUCKET}, 'zz-missing/' || i, 'artifact' from generate_series(1, 500) i`

  /** Objects per second of one walk, which must see every object. */
  const rate = async (walk: () => Promise<number>) => {
    const t = performance.now()
    const n = await walk()
    if (n !== objects) throw new Error(`walked ${n} objects, expected ${objects}`)
    return { rate: n / ((performance.now() - t) / 1000) }
  }
  const bare = async () => {
    let n = 0
    for await (const _ of s3.listObjectsV2(BUCKET, '', true)) n++
    return n
  }
  const reconcile = async () => {
    const [job] = await sql<
      { id: string }[]
    >`insert into storage_reconciliation_jobs (tenant_id, status, dry_run) values (${tenant!.id}, 'succeeded', true) returning id`
    const cp = await walkAndCompare(
      sql,
      s3,
      { tenantId: tenant!.id, jobId: job!.id, buckets: [{ kind: 'general', name: BUCKET }] },
      1000,
      undefined,
      async () => {},
    )
    return cp.objectsScanned
  }
  await bare() // warm MinIO's metadata cache and the connection pool
  return {
    baselines: [{ name: BARE, run: () => rate(bare) }],
    rows: [{ name: 'reconciliation walk', run: () => rate(reconcile), target: 0.7, targetOf: BARE }],
    rounds: 3,
  }
})
