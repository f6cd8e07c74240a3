// Backup throughput: `bun bench/backup.ts [--size 1GB]` plus the harness's flags (3 rounds by default). A migrated
// database on the harness's Postgres is filled to about --size (MB or GB) of COPY output, mostly events (a JSON
// payload of about 1 KB each) and expected objects (short rows), the two kinds of table a used platform grows;
// then its database half is backed up by `backupDatabase` (scripts/backup.ts, in a process of its own,
// bench/backup-run.ts) and by `psql` issuing the same binary `\copy` of every table in one repeatable-read
// transaction, alternating, in the same run: MB/s of each and their ratio (target: ≥ 70% of psql), with the default
// number of connections (--jobs) and with the other choice (2 when the default is 1, else 1). Peak RSS of the
// backup process from a database of --size and from one of a tenth of it (target: flat, under 50 MB apart).
// Results in bench/results/backup.json and backup-rss.json.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createDb, type Sql } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import { defaultJobs } from '../scripts/backup'
import { tablesToBackUp } from '../scripts/backup-queries'
import { benchmark, RESULTS, ROOT } from './harness'

const MB = 1024 * 1024
const PSQL = 'psql, MB/s (\\copy binary, one transaction)'
const say = (msg: string) => console.error(`[bench] ${msg}`)

/** `--size`: 1GB, 300MB, 1.5GB or a bare number of MB; answered in whole MiB. */
function sizeMb(flag: string | undefined): number {
  const m = /^(\d+(?:\.\d+)?)\s*(MB|M|GB|G)?$/i.exec(flag ?? '1GB')
  if (!m) throw new Error(`--size ${flag}: a size such as 300MB or 1GB`)
  return Math.round(Number(m[1]) * (/^g/i.test(m[2] ?? '') ? 1024 : 1))
}

/** Fills a migrated database to about `mb` of COPY output: 80% events, 20% expected objects, in batches (one
 *  statement of 100,000 rows each, so no transaction grows to the whole size). */
async function fill(sql: Sql, mb: number) {
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('bench', ${`bench-${Date.now()}`}) returning id`
  // Measured on the COPY output of these rows: about 1,140 bytes an event, 150 an expected object.
  const events = Math.round((mb * MB * 0.8) / 1140)
  const objects = Math.round((mb * MB * 0.2) / 150)
  const t = performance.now()
  for (let from = 0; from < events; from += 100_000) {
    await sql`
      insert into events (tenant_id, type, data)
      select ${tenant!.id}, 'run.finished', jsonb_build_object('run', i, 'package', gen_random_uuid(), 'violations',
        jsonb_build_array(md5(i::text), md5((i + 1)::text), md5((i + 2)::text), md5((i + 3)::text), md5((i + 4)::text),
          md5((i + 5)::text), md5((i + 6)::text), md5((i + 7)::text), md5((i + 8)::text), md5((i + 9)::text),
          md5((i + 10)::text), md5((i + 11)::text), md5((i + 12)::text), md5((i + 13)::text), md5((i + 14)::text),
          md5((i + 15)::text), md5((i + 16)::text), md5((i + 17)::text), md5((i + 18)::text), md5((i + 19)::text),
          md5((i + 20)::text), md5((i + 21)::text), md5((i + 22)::text), md5((i + 23)::text)))
      from generate_series(${from}::int, ${Math.min(from + 100_000, events) - 1}::int) i`
  }
  for (let from = 0; from < objects; from += 100_000) {
    await sql`
      insert into storage_expected_objects (tenant_id, bucket, key, kind)
      select ${tenant!.id}, 'rcp-bench-general', 'checkpoints/run-' || i || '/' || md5(i::text) || '.safetensors', 'artifact'
      from generate_series(${from}::int, ${Math.min(from + 100_000, objects) - 1}::int) i`
  }
  await sql`vacuum analyze`
  say(`filled ${events} events and ${objects} expected objects in ${((performance.now() - t) / 1000).toFixed(1)} s`)
}

const dirBytes = (dir: string) => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0)

await benchmark('backup', { size: { type: 'string' } }, async (h) => {
  const mb = sizeMb(h.flags.size as string | undefined)
  const pg = await h.postgres()
  const databaseFor = async (name: string, size: number) => {
    const admin = createDb(pg.url, { max: 1 })
    await admin`drop database if exists ${admin(name)}`
    await admin`create database ${admin(name)}`
    await admin.end()
    const url = new URL(pg.url)
    url.pathname = `/${name}`
    const sql = createDb(url.toString(), { max: 1 })
    try {
      await migrate(sql)
      await fill(sql, size)
      return { url: url.toString(), tables: await tablesToBackUp(sql) }
    } finally {
      await sql.end()
    }
  }

  const ours = (url: string, dir: string, jobs?: number) => {
    rmSync(dir, { recursive: true, force: true })
    const out = execFileSync(process.execPath, [join(ROOT, 'bench/backup-run.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, RCP_BENCH_DB: url, RCP_BENCH_DIR: dir, RCP_BENCH_JOBS: jobs ? String(jobs) : '' },
    })
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { ms: number; cpuMs: number; bytes: number; jobs: number; peakRssMb: number }
    say(`backupDatabase on ${r.jobs} connection(s): ${(r.ms / 1000).toFixed(1)} s, ${(r.cpuMs / 1000).toFixed(1)} s of CPU in its process`)
    return r
  }
  /** The same COPYs by psql: one session, one repeatable-read read-only transaction, `\copy … with (format binary)`
   *  of every table the backup takes, into files. */
  const psql = (url: string, tables: string[], dir: string) => {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    const script = [
      'begin isolation level repeatable read read only;',
      ...tables.map((t) => `\\copy ${t} to '${join(dir, `${t}.bin`)}' with (format binary)`),
      'commit;',
    ].join('\n')
    const t = performance.now()
    const run = spawnSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url], { input: script, encoding: 'utf8' })
    const ms = performance.now() - t
    if (run.status !== 0) throw new Error(`psql exited ${run.status}: ${run.stderr}`)
    return { ms, bytes: dirBytes(dir) }
  }

  // Flat memory: the backup's peak RSS from a tenth of --size and from --size.
  const small = await databaseFor('rcp_bench_backup_small', Math.max(10, Math.round(mb / 10)))
  const large = await databaseFor('rcp_bench_backup_large', mb)
  const rss: Record<string, number> = {}
  for (const [label, db] of [
    [`${Math.max(10, Math.round(mb / 10))} MB`, small],
    [`${mb} MB`, large],
  ] as const) {
    const r = ours(db.url, join(h.scratch, 'ours'))
    rss[label] = Math.round(r.peakRssMb)
    say(`peak RSS backing up ${label}: ${r.peakRssMb.toFixed(0)} MB (${(r.bytes / MB).toFixed(0)} MB in ${(r.ms / 1000).toFixed(1)} s)`)
  }
  const flat = rss[`${mb} MB`]! - rss[`${Math.max(10, Math.round(mb / 10))} MB`]!
  say(`peak RSS difference: ${flat} MB (target < 50 MB: ${flat < 50 ? 'PASS' : 'MISS'})`)
  writeFileSync(join(RESULTS, 'backup-rss.json'), `${JSON.stringify({ peakRssMb: rss, differenceMb: flat, target: '< 50 MB' }, null, 2)}\n`)

  const expected = psql(large.url, large.tables, join(h.scratch, 'psql')).bytes
  const other = defaultJobs() === 1 ? 2 : 1
  const rate = (r: { ms: number; bytes: number }) => {
    if (r.bytes !== expected) throw new Error(`wrote ${r.bytes} bytes, psql ${expected}`)
    return { rate: r.bytes / MB / (r.ms / 1000) }
  }
  return {
    baselines: [{ name: PSQL, run: async () => rate(psql(large.url, large.tables, join(h.scratch, 'psql'))) }],
    rows: [
      {
        name: `backupDatabase, ${defaultJobs()} connection(s) (the default), MB/s (${mb} MB)`,
        run: async () => rate(ours(large.url, join(h.scratch, 'ours'))),
        target: 0.7,
        targetOf: PSQL,
      },
      // The other way of this machine: two connections in one snapshot when the default is one, one when it is more.
      { name: `backupDatabase, --jobs=${other}, MB/s (${mb} MB)`, run: async () => rate(ours(large.url, join(h.scratch, 'ours'), other)) },
    ],
    rounds: h.settings.rounds || 3,
    paired: true,
  }
})
