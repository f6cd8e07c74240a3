// The offboarding export's rows: `bun bench/offboarding-export.ts [--rows 200000]` plus the harness's flags (2 rounds by
// default, paired). A tenant with --rows rows in `events` (a JSON payload of about 200 bytes, the table a busy tenant
// fills) and its own row is exported by the export's rows half (`writeTenantRows` in activities/offboarding.ts: every
// table with a tenant_id column, NDJSON through gzip and a SHA-256 into a multipart upload), and, in the same run on the
// same Postgres, MinIO and minio client, by a bare baseline: `COPY (select * from events where tenant_id = …) TO STDOUT`
// through the driver piped into one `putObject` stream. Rows/s of each and their ratio; target ≥ 50,000 rows/s.
// Peak RSS of a process exporting a tenth of --rows and --rows (bench/offboarding-export-run.ts; target: flat).
// Results in bench/results/offboarding-export.json and offboarding-export-rss.json.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { createDb, type Sql } from '../api/platform/db'
import { s3For } from '../api/storage/s3'
import { CACHE_DIR, freePort, startMinio } from '../scripts/platform'
import { benchmark, RESULTS, ROOT } from './harness'

const BARE = 'bare COPY (select …) TO STDOUT into one putObject'
const BUCKET = 'rcp-bench-offboarding-export'
const say = (msg: string) => console.error(`[bench] ${msg}`)

/** A tenant with `rows` events; answers its id. */
export async function seedTenant(sql: Sql, rows: number): Promise<string> {
  const [t] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('bench', ${`bench-${crypto.randomUUID()}`}) returning id`
  for (let from = 0; from < rows; from += 100_000) {
    await sql`
      insert into events (tenant_id, type, data, dispatched_at)
      select ${t!.id}, 'run.finished', jsonb_build_object('run', i, 'package', gen_random_uuid(), 'violations',
        jsonb_build_array(md5(i::text), md5((i + 1)::text), md5((i + 2)::text)), 'ok', i % 3 = 0), now()
      from generate_series(${from}::int, ${Math.min(from + 100_000, rows) - 1}::int) i`
  }
  await sql`vacuum analyze events`
  return t!.id
}

await benchmark('offboarding-export', { rows: { type: 'string' } }, async (h) => {
  const rows = Number(h.flags.rows ?? 200_000)
  const minioDir = join(CACHE_DIR, 'bench-minio-offboarding')
  const [minio, pg] = await Promise.all([
    startMinio({ dataDir: minioDir, port: await freePort(), consolePort: await freePort(), logFile: join(minioDir, 'minio.log') }),
    h.postgres(),
  ])
  h.own(minio)
  const sql: Sql = createDb(pg.url, { max: 2 })
  h.own({ stop: () => sql.end({ timeout: 5 }) })
  const s3 = s3For({ id: 'local', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })
  if (!(await s3.bucketExists(BUCKET))) await s3.makeBucket(BUCKET)
  const env = { ...process.env, DATABASE_URL: pg.url, S3_ENDPOINT: minio.endpoint, S3_ACCESS_KEY: minio.accessKey, S3_SECRET_KEY: minio.secretKey }

  /** The export in a process of its own (bench/offboarding-export-run.ts): rows, wall time and peak RSS. */
  const ours = (tenantId: string) => {
    const out = execFileSync(process.execPath, [join(ROOT, 'bench/offboarding-export-run.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...env, RCP_BENCH_TENANT: tenantId, RCP_BENCH_BUCKET: BUCKET },
    })
    return JSON.parse(out.trim().split('\n').at(-1)!) as { ms: number; rows: number; bytes: number; peakRssMb: number }
  }

  const small = await seedTenant(sql, Math.round(rows / 10))
  const large = await seedTenant(sql, rows)
  const rss: Record<string, number> = {}
  for (const [label, tenant] of [
    [`${Math.round(rows / 10)} rows`, small],
    [`${rows} rows`, large],
  ] as const) {
    const r = ours(tenant)
    rss[label] = Math.round(r.peakRssMb)
    say(`peak RSS exporting ${label}: ${r.peakRssMb.toFixed(0)} MB (${r.rows} rows, ${(r.bytes / 1e6).toFixed(1)} MB gzip in ${(r.ms / 1000).toFixed(1)} s)`)
  }
  const flat = rss[`${rows} rows`]! - rss[`${Math.round(rows / 10)} rows`]!
  say(`peak RSS difference: ${flat} MB`)
  writeFileSync(join(RESULTS, 'offboarding-export-rss.json'), `${JSON.stringify({ peakRssMb: rss, differenceMb: flat }, null, 2)}\n`)

  // Every row of the tenant: its events and its own row.
  const expected = rows + 1
  const bare = async () => {
    // A connection of its own, ended after: the driver's socket may stay paused after a COPY stream (porsager/postgres#499).
    const one = createDb(pg.url, { max: 1 })
    try {
      const t = performance.now()
      const stream = (await one.unsafe(`copy (select * from events where tenant_id = '${large}') to stdout`).readable()) as Readable
      let lines = 0
      stream.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
      })
      await s3.putObject(BUCKET, `bare/${crypto.randomUUID()}.tsv`, stream)
      if (lines !== rows) throw new Error(`copied ${lines} rows, expected ${rows}`)
      return { rate: lines / ((performance.now() - t) / 1000) }
    } finally {
      await one.end({ timeout: 1 })
    }
  }
  const exported = async () => {
    const r = ours(large)
    if (r.rows !== expected) throw new Error(`exported ${r.rows} rows, expected ${expected}`)
    return { rate: r.rows / (r.ms / 1000) }
  }
  say(`${rows} rows per measurement`)
  return {
    baselines: [{ name: BARE, run: bare }],
    rows: [{ name: 'offboarding export, rows (writeTenantRows)', run: exported, targetOf: BARE }],
    rounds: Number(h.flags.rounds ?? 2),
    paired: true,
  }
})
