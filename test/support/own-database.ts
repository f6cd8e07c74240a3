// A database of a file's own on the run's Postgres, migrated, for what a database's every client shares: the webhook
// dispatcher claims every undispatched event of its database, NOTIFY wakes every listener of it. Files that need one
// run beside the others instead of taking turns on the run's database.
import { createDb } from '../../api/platform/db'
import { migrate } from '../../api/platform/migrate'
import { auditLeaks, otherScans } from './secrets'

export interface OwnDatabase {
  url: string
  drop(): Promise<void>
  /** Scans it for leaked secrets first (the run-wide scan, test/support/preload.ts, reads the run's database only). */
  scanAndDrop(): Promise<void>
}

export async function ownDatabase(tag: string): Promise<OwnDatabase> {
  const admin = createDb(process.env.DATABASE_URL!, { max: 1 })
  const name = `rcp_${tag}_${crypto.randomUUID().slice(0, 8)}`
  await admin`create database ${admin(name)}`
  const url = new URL(process.env.DATABASE_URL!)
  url.pathname = `/${name}`
  const sql = createDb(url.toString(), { max: 1 })
  try {
    await migrate(sql)
  } finally {
    await sql.end({ timeout: 5 })
  }
  const drop = async () => {
    await admin`drop database if exists ${admin(name)} with (force)`
    await admin.end({ timeout: 5 })
  }
  return {
    url: url.toString(),
    drop,
    async scanAndDrop() {
      otherScans.push(await auditLeaks(url.toString()))
      await drop()
    },
  }
}
