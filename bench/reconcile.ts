// Reconciliation throughput: `bun bench/reconcile.ts [--objects 100000] [--rounds 3]`. Walks one bucket of
// --objects objects with the reconciliation walk (S3 listing merged with expected rows in Postgres, findings
// written) and with a bare listObjectsV2 stream of the same bucket, alternating, in the same run, and reports
// objects/s of each and their ratio (target: reconciliation ≥ 70% of the bare walk). The MinIO data lives in
// ~/.cache/rcp/bench-minio, so the objects are uploaded once and reused by later runs. It reports; it never fails.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { walkAndCompare } from '../activities/storage-reconcile'
import { createDb } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import { s3For } from '../api/storage/s3'
import { CACHE_DIR, freePort, killChildrenOnExit, onShutdownSignal, startMinio, startPostgres, type MinioServer, type PostgresServer } from '../scripts/platform'

const { values: flags } = parseArgs({ options: { objects: { type: 'string' }, rounds: { type: 'string' } } })
const OBJECTS = Number(flags.objects ?? 100_000)
const ROUNDS = Number(flags.rounds ?? 3)
const BUCKET = 'rcp-bench-reconcile'
const key = (i: number) => `obj/${String(i).padStart(8, '0')}`
const say = (msg: string) => console.error(`[bench] ${msg}`)

const scratch = mkdtempSync(join(tmpdir(), 'rcp-bench-reconcile-'))
chmodSync(scratch, 0o755) // Postgres runs as the postgres user and keeps its data dir in here
let minio: MinioServer | undefined
let pg: PostgresServer | undefined
const teardown = async () => {
  await minio?.stop()
  await pg?.stop()
  rmSync(scratch, { recursive: true, force: true })
}
killChildrenOnExit()
onShutdownSignal(async () => { await teardown(); return 130 })

async function ensureObjects(s3: ReturnType<typeof s3For>) {
  if (!(await s3.bucketExists(BUCKET))) await s3.makeBucket(BUCKET)
  const present = new Set<string>()
  for await (const o of s3.listObjectsV2(BUCKET, '', true)) if (o.name) present.add(o.name)
  const missing = Array.from({ length: OBJECTS }, (_, i) => key(i)).filter((k) => !present.has(k))
  if (missing.length === 0) return say(`bucket ${BUCKET} already holds ${OBJECTS} objects`)
  say(`uploading ${missing.length} objects (kept for later runs)`)
  const t = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: 128 }, async () => {
    while (next < missing.length) await s3.putObject(BUCKET, missing[next++]!, Buffer.from('x'))
  }))
  say(`uploaded in ${((performance.now() - t) / 1000).toFixed(1)} s`)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

try {
  const minioDir = join(CACHE_DIR, 'bench-minio')
  ;[minio, pg] = await Promise.all([
    startMinio({ dataDir: minioDir, port: await freePort(), consolePort: await freePort(), logFile: join(minioDir, 'minio.log') }),
    startPostgres({ dataDir: join(scratch, 'pg'), port: await freePort(), database: 'rcp_bench_reconcile', logFile: join(scratch, 'postgres.log'), ephemeral: true }),
  ])
  const sql = createDb(pg.url, { max: 4 })
  await migrate(sql)
  const s3 = s3For({ id: 'bench', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })
  await ensureObjects(s3)

  // The records know all but the last 1% of the objects, plus 500 the bucket lacks: both kinds of finding.
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('bench', ${`bench-${Date.now()}`}) returning id`
  const known = Math.floor(OBJECTS * 0.99)
  await sql`
    insert into storage_expected_objects (tenant_id, bucket, key, kind)
    select ${tenant!.id}::uuid, ${BUCKET}, 'obj/' || lpad(i::text, 8, '0'), 'artifact' from generate_series(0, ${known - 1}) i
    union all select ${tenant!.id}::uuid, ${BUCKET}, 'zz-missing/' || i, 'artifact' from generate_series(1, 500) i`

  const bare = async () => {
    let n = 0
    for await (const _ of s3.listObjectsV2(BUCKET, '', true)) n++
    return n
  }
  const reconcile = async () => {
    const [job] = await sql<{ id: string }[]>`insert into storage_reconciliation_jobs (tenant_id, status, dry_run) values (${tenant!.id}, 'succeeded', true) returning id`
    const cp = await walkAndCompare(sql, s3, { tenantId: tenant!.id, jobId: job!.id, buckets: [{ kind: 'general', name: BUCKET }] }, 1000, undefined, async () => {})
    return cp.objectsScanned
  }
  const timed = async (f: () => Promise<number>) => {
    const t = performance.now()
    const n = await f()
    return { n, s: (performance.now() - t) / 1000 }
  }

  await bare() // warm MinIO's metadata cache and the connection pool
  const rates = { bare: [] as number[], reconcile: [] as number[] }
  for (let r = 0; r < ROUNDS; r++) {
    const b = await timed(bare)
    const c = await timed(reconcile)
    if (b.n !== OBJECTS || c.n !== OBJECTS) throw new Error(`walked ${b.n} / ${c.n} objects, expected ${OBJECTS}`)
    rates.bare.push(b.n / b.s)
    rates.reconcile.push(c.n / c.s)
    say(`round ${r + 1}: bare ${Math.round(b.n / b.s)} objects/s, reconciliation ${Math.round(c.n / c.s)} objects/s`)
  }
  const bareRate = median(rates.bare)
  const recRate = median(rates.reconcile)
  const ratio = recRate / bareRate
  console.log(JSON.stringify({
    objects: OBJECTS, rounds: ROUNDS, bareObjectsPerSecond: Math.round(bareRate), reconcileObjectsPerSecond: Math.round(recRate),
    ratio: Math.round(ratio * 1000) / 1000, target: 0.7, met: ratio >= 0.7,
  }))
  await sql.end({ timeout: 5 })
} finally {
  await teardown()
}
