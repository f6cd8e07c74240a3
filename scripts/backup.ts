// `bun scripts/backup.ts backup <dir>` and `bun scripts/backup.ts restore <dir>` (docs/operations.md "Backup and restore"): the
// database (every table's rows, COPY in binary, one consistent snapshot) and every bucket of every configured
// storage region (objects, tags, versioning, lifecycle), written to <dir>; and back into an empty database and
// empty storage. Run with the platform's environment (DATABASE_URL, S3_*, STORAGE_REGIONS). The API and worker are
// stopped for a restore; a backup can be taken while they run.
import { createReadStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { loadConfig, type Config } from '../api/platform/config'
import { createDb } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import { regionsFromConfig } from '../api/storage/regions'
import { s3For } from '../api/storage/s3'
import { appliedMigrations, copyIn, copyOut, tablesToBackUp } from './backup-queries'

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

export async function backupPlatform(config: Config, dir: string): Promise<BackupManifest> {
  mkdirSync(join(dir, 'db'), { recursive: true })
  const sql = createDb(config.DATABASE_URL, { max: 1, name: 'rcp-backup' })
  let migrations: string[] = []
  let tables: string[] = []
  try {
    await sql.begin('isolation level repeatable read read only', async (tx) => {
      migrations = await appliedMigrations(tx)
      tables = await tablesToBackUp(tx)
      for (const table of tables) await copyOut(tx, table, join(dir, 'db', `${table}.bin`))
    })
  } finally {
    await sql.end({ timeout: 5 })
  }
  const regions = []
  for (const region of usableRegions(config)) {
    const s3 = s3For(region)
    const buckets: BucketRecord[] = []
    for (const { name } of await s3.listBuckets()) {
      const objects: BucketRecord['objects'] = []
      for await (const o of s3.listObjectsV2(name, '', true) as AsyncIterable<{ name?: string; size: number }>) {
        if (!o.name) continue
        const file = objectFile(dir, region.id, name, o.name)
        mkdirSync(dirname(file), { recursive: true })
        await s3.fGetObject(name, o.name, file)
        const stat = await s3.statObject(name, o.name)
        objects.push({ key: o.name, size: o.size, contentType: stat.metaData?.['content-type'] })
      }
      const tags = Object.fromEntries((await s3.getBucketTagging(name)).map((t) => [t.Key, t.Value]))
      const versioning = (await s3.getBucketVersioning(name).catch(() => null))?.Status === 'Enabled'
      const lifecycle = await s3.getBucketLifecycle(name).catch(() => null)
      buckets.push({ name, tags, versioning, lifecycle, objects })
    }
    regions.push({ id: region.id, buckets })
  }
  const manifest: BackupManifest = { createdAt: new Date().toISOString(), migrations, tables, regions }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2))
  return manifest
}

/** Into an empty database (migrated here to exactly the backup's migrations) and storage without those buckets. */
export async function restorePlatform(config: Config, dir: string): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BackupManifest
  const sql = createDb(config.DATABASE_URL, { max: 1, name: 'rcp-restore' })
  try {
    const existing = await tablesToBackUp(sql)
    if (existing.length > 0) throw new Error(`the database is not empty (${existing.length} tables): restore needs an empty one`)
    await migrate(sql)
    const applied = await appliedMigrations(sql)
    if (JSON.stringify(applied) !== JSON.stringify(manifest.migrations)) {
      throw new Error(
        `this checkout's migrations (${applied.at(-1)}) differ from the backup's (${manifest.migrations.at(-1)}): restore with the release that took it`,
      )
    }
    await copyIn(
      sql,
      manifest.tables.map((table) => ({ table, file: join(dir, 'db', `${table}.bin`) })),
    )
  } finally {
    await sql.end({ timeout: 5 })
  }
  for (const { id, buckets } of manifest.regions) {
    const region = usableRegions(config).find((r) => r.id === id)
    if (!region) throw new Error(`the backup holds region ${id}, which this configuration does not`)
    const s3 = s3For(region)
    for (const b of buckets) {
      await s3.makeBucket(b.name)
      if (b.versioning) await s3.setBucketVersioning(b.name, { Status: 'Enabled' })
      if (b.lifecycle) await s3.setBucketLifecycle(b.name, b.lifecycle as Parameters<typeof s3.setBucketLifecycle>[1])
      if (Object.keys(b.tags).length > 0) await s3.setBucketTagging(b.name, b.tags)
      for (const o of b.objects) {
        await s3.putObject(b.name, o.key, createReadStream(objectFile(dir, id, b.name, o.key)), o.size, o.contentType ? { 'content-type': o.contentType } : {})
      }
    }
  }
}

if (import.meta.main) {
  const [verb, dir] = process.argv.slice(2)
  if ((verb !== 'backup' && verb !== 'restore') || !dir) {
    console.error('usage: bun scripts/backup.ts backup|restore <dir>')
    process.exit(2)
  }
  const config = loadConfig()
  if (verb === 'backup') {
    const m = await backupPlatform(config, dir)
    console.log(`backed up ${m.tables.length} tables and ${m.regions.reduce((n, r) => n + r.buckets.length, 0)} buckets to ${dir}`)
  } else {
    await restorePlatform(config, dir)
    console.log(`restored ${dir}`)
  }
}
