// `bun scripts/backup.ts backup <dir>` and `bun scripts/backup.ts restore <dir>` (docs/operations.md "Backup and restore"): the
// database (every table's rows, COPY in binary, one consistent snapshot) and every bucket of every configured
// storage region (objects, tags, versioning, lifecycle), written to <dir>; and back into an empty database and
// empty storage. Run with the platform's environment (DATABASE_URL, S3_*, STORAGE_REGIONS). The API and worker are
// stopped for a restore; a backup can be taken while they run. `--stall-timeout=<seconds>` (default 60): a step
// with no progress for that long fails, naming its table, bucket or object, and the command exits 1. `--jobs=<n>`
// (default: half the cores, 1 to 4): connections copying tables at once, all in one exported snapshot.
import { createReadStream, createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { loadConfig, type Config } from '../api/platform/config'
import { createDb, type Db } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import { regionsFromConfig } from '../api/storage/regions'
import { s3For } from '../api/storage/s3'
import {
  appliedMigrations,
  bounded,
  boundedTransaction,
  copyIn,
  copyOut,
  DEFAULT_STALL_MS,
  exportSnapshot,
  importSnapshot,
  progressTap,
  type StepLimits,
  StalledStep,
  tablesLargestFirst,
  tablesToBackUp,
} from './backup-queries'

interface BucketRecord {
  name: string
  tags: Record<string, string>
  versioning: boolean
  lifecycle: unknown
  objects: { key: string; size: number; contentType?: string }[]
}

interface BackupManifest {
  createdAt: string
  migrations: string[]
  tables: string[]
  regions: { id: string; buckets: BucketRecord[] }[]
}

const usableRegions = (config: Config) => regionsFromConfig(config).filter((r) => r.available && r.accessKey && r.secretKey)
// Object keys may hold slashes; the file keeps them as directories under the bucket's own folder.
const objectFile = (dir: string, region: string, bucket: string, key: string) => join(dir, 'buckets', region, bucket, 'objects', key)

/** A step with no progress of its own to report (one answer expected): bounded by the stall limit as a whole. */
const answer = <T>(step: string, limits: StepLimits, work: () => Promise<T>) => bounded(step, limits, () => work())

/** A stream into a file, bounded by the stall limit between its chunks. */
const streamToFile = (step: string, limits: StepLimits, open: () => Promise<Readable>, file: string) => {
  let source: Readable | undefined
  return bounded(
    step,
    limits,
    async (progress) => {
      source = await open()
      progress()
      await pipeline(source, progressTap(progress), createWriteStream(file))
    },
    () => source?.destroy(),
  )
}

/** Connections copying at once by default: half the machine's cores, 1 to 4. Each COPY keeps a server backend and its
 *  client busy at once, so beyond that they only take turns on the same cores (on 2 shared cores, one connection ran at
 *  84% of psql and two at 70%: bench/README.md "Backups"); on a larger machine they overlap. At most 4: each is a
 *  connection and a backend taken from a database that keeps serving the platform. */
export const defaultJobs = () => Math.max(1, Math.min(4, Math.floor(availableParallelism() / 2)))

const SNAPSHOT_MODE = 'isolation level repeatable read read only'

/** The database half: every table's rows into <dir>/db/<table>.bin, by `jobs` connections at once that all read one
 *  snapshot: the first connection's transaction exports it (pg_export_snapshot) and stays open until every table is
 *  written; the others import it (SET TRANSACTION SNAPSHOT) before their first read. Tables are taken largest first
 *  from one queue; each COPY is its own bounded step, as with one connection. */
export async function backupDatabase(
  url: string,
  dir: string,
  limits: StepLimits = { stallMs: DEFAULT_STALL_MS },
  jobs = defaultJobs(),
): Promise<{ migrations: string[]; tables: string[]; bytes: number }> {
  mkdirSync(join(dir, 'db'), { recursive: true })
  const sql = createDb(url, { max: jobs, name: 'rcp-backup' })
  try {
    return await boundedTransaction(sql, SNAPSHOT_MODE, limits, async (tx) => {
      const migrations = await answer('the list of applied migrations', limits, () => appliedMigrations(tx))
      const tables = await answer('the list of tables', limits, () => tablesLargestFirst(tx))
      const queue = [...tables]
      let failed = false
      const copyFromQueue = async (db: Db) => {
        let bytes = 0
        for (let table = queue.shift(); table !== undefined && !failed; table = queue.shift()) {
          bytes += await copyOut(db, table, join(dir, 'db', `${table}.bin`), limits)
        }
        return bytes
      }
      const helpers = Math.min(jobs, tables.length) - 1
      const snapshot = helpers > 0 ? await answer('the export of the snapshot', limits, () => exportSnapshot(tx)) : ''
      const copies = [
        copyFromQueue(tx),
        ...Array.from({ length: helpers }, () =>
          boundedTransaction(sql, SNAPSHOT_MODE, limits, async (other) => {
            await answer('the import of the snapshot', limits, () => importSnapshot(other, snapshot))
            return copyFromQueue(other)
          }),
        ),
      ]
      // The first failure fails the backup; the other connections take no further table (the caller ends them).
      const written = await Promise.all(
        copies.map((c) =>
          c.catch((err) => {
            failed = true
            throw err
          }),
        ),
      )
      return { migrations, tables: [...tables].sort(), bytes: written.reduce((a, b) => a + b, 0) }
    })
  } finally {
    // A stalled step leaves its connection waiting: ended within a second, whatever it waits for.
    await sql.end({ timeout: 1 })
  }
}

export async function backupPlatform(
  config: Config,
  dir: string,
  limits: StepLimits = { stallMs: DEFAULT_STALL_MS },
  jobs = defaultJobs(),
): Promise<BackupManifest> {
  const { migrations, tables } = await backupDatabase(config.DATABASE_URL, dir, limits, jobs)
  const regions = []
  for (const region of usableRegions(config)) {
    const s3 = s3For(region)
    const buckets: BucketRecord[] = []
    for (const { name } of await answer(`the buckets of region ${region.id}`, limits, () => s3.listBuckets())) {
      const objects: BucketRecord['objects'] = []
      const listed: { name?: string; size: number }[] = []
      await bounded(`the objects of bucket ${name}`, limits, async (progress) => {
        for await (const o of s3.listObjectsV2(name, '', true) as AsyncIterable<{ name?: string; size: number }>) {
          progress()
          listed.push(o)
        }
      })
      for (const o of listed) {
        if (!o.name) continue
        const key = o.name
        const file = objectFile(dir, region.id, name, key)
        mkdirSync(dirname(file), { recursive: true })
        await streamToFile(`object ${name}/${key}`, limits, () => s3.getObject(name, key), file)
        const stat = await answer(`the metadata of object ${name}/${key}`, limits, () => s3.statObject(name, key))
        objects.push({ key, size: o.size, contentType: stat.metaData?.['content-type'] })
      }
      const settings = await answer(`the settings of bucket ${name}`, limits, async () => ({
        tags: Object.fromEntries((await s3.getBucketTagging(name)).map((t) => [t.Key, t.Value])),
        versioning: (await s3.getBucketVersioning(name).catch(() => null))?.Status === 'Enabled',
        lifecycle: await s3.getBucketLifecycle(name).catch(() => null),
      }))
      buckets.push({ name, ...settings, objects })
    }
    regions.push({ id: region.id, buckets })
  }
  const manifest: BackupManifest = { createdAt: new Date().toISOString(), migrations, tables, regions }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2))
  return manifest
}

/** Into an empty database (migrated here to exactly the backup's migrations) and storage without those buckets. */
export async function restorePlatform(config: Config, dir: string, limits: StepLimits = { stallMs: DEFAULT_STALL_MS }): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BackupManifest
  const sql = createDb(config.DATABASE_URL, { max: 1, name: 'rcp-restore' })
  try {
    const existing = await answer('the list of tables', limits, () => tablesToBackUp(sql))
    if (existing.length > 0) throw new Error(`the database is not empty (${existing.length} tables): restore needs an empty one`)
    await migrate(sql)
    const applied = await answer('the list of applied migrations', limits, () => appliedMigrations(sql))
    if (JSON.stringify(applied) !== JSON.stringify(manifest.migrations)) {
      throw new Error(
        `this checkout's migrations (${applied.at(-1)}) differ from the backup's (${manifest.migrations.at(-1)}): restore with the release that took it`,
      )
    }
    await copyIn(
      sql,
      manifest.tables.map((table) => ({ table, file: join(dir, 'db', `${table}.bin`) })),
      limits,
    )
  } finally {
    await sql.end({ timeout: 1 })
  }
  for (const { id, buckets } of manifest.regions) {
    const region = usableRegions(config).find((r) => r.id === id)
    if (!region) throw new Error(`the backup holds region ${id}, which this configuration does not`)
    const s3 = s3For(region)
    for (const b of buckets) {
      await answer(`bucket ${b.name} and its settings`, limits, async () => {
        await s3.makeBucket(b.name)
        if (b.versioning) await s3.setBucketVersioning(b.name, { Status: 'Enabled' })
        if (b.lifecycle) await s3.setBucketLifecycle(b.name, b.lifecycle as Parameters<typeof s3.setBucketLifecycle>[1])
        if (Object.keys(b.tags).length > 0) await s3.setBucketTagging(b.name, b.tags)
      })
      for (const o of b.objects) {
        const source = createReadStream(objectFile(dir, id, b.name, o.key))
        await bounded(
          `object ${b.name}/${o.key}`,
          limits,
          async (progress) => {
            const tapped = progressTap(progress)
            source.on('error', (err) => tapped.destroy(err))
            await s3.putObject(b.name, o.key, source.pipe(tapped), o.size, o.contentType ? { 'content-type': o.contentType } : {})
          },
          () => source.destroy(),
        )
      }
    }
  }
}

/** `[--stall-timeout=<seconds>] [--jobs=<n>] backup|restore <dir>`; undefined when the arguments say something else. */
export function parseArguments(args: string[]): { verb: 'backup' | 'restore'; dir: string; limits: StepLimits; jobs: number } | undefined {
  let stallMs = DEFAULT_STALL_MS
  let jobs = defaultJobs()
  const rest: string[] = []
  for (const arg of args) {
    const stall = /^--stall-timeout=(\d+(?:\.\d+)?)$/.exec(arg)
    const many = /^--jobs=(\d+)$/.exec(arg)
    if (stall) stallMs = Number(stall[1]) * 1000
    else if (many) jobs = Number(many[1])
    else rest.push(arg)
  }
  const [verb, dir, ...more] = rest
  if ((verb !== 'backup' && verb !== 'restore') || !dir || more.length > 0 || !(stallMs > 0) || !(jobs >= 1 && jobs <= 64)) return undefined
  return { verb, dir, limits: { stallMs }, jobs }
}

if (import.meta.main) {
  const parsed = parseArguments(process.argv.slice(2))
  if (!parsed) {
    console.error(
      `usage: bun scripts/backup.ts [--stall-timeout=<seconds>, default ${DEFAULT_STALL_MS / 1000}] [--jobs=<connections>, default ${defaultJobs()}] backup|restore <dir>`,
    )
    process.exit(2)
  }
  const { verb, dir, limits, jobs } = parsed
  const config = loadConfig()
  try {
    if (verb === 'backup') {
      const m = await backupPlatform(config, dir, limits, jobs)
      console.log(`backed up ${m.tables.length} tables and ${m.regions.reduce((n, r) => n + r.buckets.length, 0)} buckets to ${dir}`)
    } else {
      await restorePlatform(config, dir, limits)
      console.log(`restored ${dir}`)
    }
  } catch (err) {
    console.error(`${verb} failed: ${err instanceof StalledStep ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
    process.exit(1)
  }
  // Anything a stalled step left behind (a socket, a stream) must not keep the process alive.
  process.exit(0)
}
