// One export of a tenant's rows (writeTenantRows of activities/offboarding.ts) in its own process, for
// bench/offboarding-export.ts: RCP_BENCH_TENANT into RCP_BENCH_BUCKET, with the platform's environment (DATABASE_URL,
// S3_*). Prints one JSON line: wall time, rows, gzip bytes and the process's peak resident set (VmHWM).
import { readFileSync } from 'node:fs'
import type { ActivityDeps } from '../activities/deps'
import { writeTenantRows } from '../activities/offboarding'
import { loadConfig } from '../api/platform/config'
import { createDb } from '../api/platform/db'
import { createLogger } from '../api/platform/log'
import { newSecretKey } from '../scripts/platform'

const config = loadConfig({ ...process.env, SECRET_KEY: process.env.SECRET_KEY ?? newSecretKey() })
const sql = createDb(config.DATABASE_URL, { max: 2 })
// The export reads only the pool, the configuration (its region) and the log.
const deps = { sql, config, log: createLogger('silent', { service: 'bench' }) } as unknown as ActivityDeps
const tenantId = process.env.RCP_BENCH_TENANT!
const requestId = crypto.randomUUID()
const plan = {
  tenantId,
  requestId,
  regionId: 'local',
  bucket: process.env.RCP_BENCH_BUCKET!,
  prefix: `offboarding/${requestId}/`,
  buckets: [],
  auditChainHead: { seq: 0, hash: null },
}
const tables: Parameters<typeof writeTenantRows>[2] = []
const t = performance.now()
const file = await writeTenantRows(deps, plan, tables, () => {}, new AbortController().signal)
const ms = performance.now() - t
await sql.end({ timeout: 1 })
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
const rows = tables.reduce((n, x) => n + x.rows, 0)
console.log(JSON.stringify({ ms, rows, bytes: file.bytes, peakRssMb: Number(hwm?.[1] ?? 0) / 1024 }))
process.exit(0)
