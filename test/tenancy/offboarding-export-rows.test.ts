// The offboarding export's rows (activities/offboarding.ts, activities/tenant-export-queries.ts), on a database of
// its own: Postgres writes each line (row_to_json through COPY), so what a line holds must be exactly the row, whatever
// its text; the tenant id written into the COPY must be one; and an export cancelled mid-read ends its COPY at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Readable } from 'node:stream'
import type { ActivityDeps } from '../../activities/deps'
import { writeTenantRows } from '../../activities/offboarding'
import { type TenantTable, tenantRowsCopy, tenantTables } from '../../activities/tenant-export-queries'
import { loadConfig } from '../../api/platform/config'
import { createDb, type Sql } from '../../api/platform/db'
import { exportedColumns } from '../../api/offboarding/export'
import { createLogger } from '../../api/platform/log'
import { localS3 } from '../storage/helpers'

const database = `rcp_export_${crypto.randomUUID().slice(0, 8)}`
const admin = createDb(process.env.DATABASE_URL!, { max: 1 })
const tenantId = crypto.randomUUID()
let sql: Sql
let url: string

const within = <T>(ms: number, what: string, work: Promise<T>) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms))])

beforeAll(async () => {
  await admin`create database ${admin(database)}`
  const u = new URL(process.env.DATABASE_URL!)
  u.pathname = `/${database}`
  url = u.toString()
  sql = createDb(url, { max: 2 })
  await sql`create table tenants (id uuid primary key, name text not null)`
  await sql`create table probes (tenant_id uuid not null, note text, raw bytea, at timestamptz, n bigint, j jsonb, secret_hash text)`
  await sql`insert into tenants values (${tenantId}, 'Acme'), (${crypto.randomUUID()}, 'Other')`
})

afterAll(async () => {
  await sql?.end({ timeout: 1 })
  await admin`drop database if exists ${admin(database)} with (force)`
  await admin.end()
})

async function lines(table: TenantTable, columns: string[]): Promise<{ table: string; row: Record<string, unknown> }[]> {
  const text = await sql.begin(async (tx) => {
    await tx`set local timezone = 'UTC'`
    const stream = (await tx.unsafe(tenantRowsCopy(table, columns, tenantId)).readable()) as unknown as Readable
    let out = ''
    for await (const chunk of stream) out += (chunk as Buffer).toString()
    ;(stream as unknown as { _read(n: number): void })._read(0)
    return out
  })
  expect(text.endsWith('\n')).toBe(true)
  return text
    .slice(0, -1)
    .split('\n')
    .map((l) => JSON.parse(l))
}

describe('the export lines', () => {
  test('backslashes, quotes, newlines, control characters and bytes come back exactly; other tenants and secret columns stay out', async () => {
    const note = 'C:\\models\\"v1"\nline two\ttab \u0001\u0002 \\N ☃'
    await sql`insert into probes values
      (${tenantId}, ${note}, ${Buffer.from([0, 255, 16, 92])}, '2026-11-27T23:00:00.123456Z', 9007199254740991, ${sql.json({ path: 'a\\b', q: '"' })}, 'h1'),
      (${tenantId}, null, null, null, null, null, 'h2'),
      (${crypto.randomUUID()}, 'another tenant', null, null, null, null, 'h3')`
    const table = (await tenantTables(sql)).find((t) => t.table === 'probes')!
    expect(exportedColumns(table.columns)).toEqual(['tenant_id', 'note', 'raw', 'at', 'n', 'j'])
    const got = await lines(table, exportedColumns(table.columns))
    expect(got).toEqual([
      {
        table: 'probes',
        row: { tenant_id: tenantId, note, raw: '00ff105c', at: '2026-11-27T23:00:00.123456+00:00', n: 9007199254740991, j: { path: 'a\\b', q: '"' } },
      },
      { table: 'probes', row: { tenant_id: tenantId, note: null, raw: null, at: null, n: null, j: null } },
    ])
    const tenants = await lines((await tenantTables(sql)).find((t) => t.table === 'tenants')!, ['id', 'name'])
    expect(tenants).toEqual([{ table: 'tenants', row: { id: tenantId, name: 'Acme' } }])
  })

  test('a tenant id that is not a UUID is never written into the COPY', async () => {
    const table = (await tenantTables(sql)).find((t) => t.table === 'probes')!
    expect(() => tenantRowsCopy(table, ['tenant_id'], `${tenantId}' or true or '' = '`)).toThrow('not a tenant id')
  })
})

describe('an export whose upload stops', () => {
  test('cancelled while the rows are read: the COPY is cancelled, nothing is left in the bucket, and the connection answers the next query', async () => {
    await sql`insert into probes (tenant_id, note) select ${tenantId}, repeat(md5(i::text), 20) from generate_series(1, 50000) i`
    const one = createDb(url, { max: 1 })
    const s3 = localS3()
    const bucket = `rcp-test-export-${crypto.randomUUID().slice(0, 8)}`
    await s3.makeBucket(bucket)
    try {
      const config = loadConfig({ ...process.env, DATABASE_URL: url })
      const deps = { sql: one, config, log: createLogger('silent', { service: 'test' }) } as unknown as ActivityDeps
      const plan = { tenantId, requestId: crypto.randomUUID(), regionId: 'local', bucket, prefix: 'x/', buckets: [], auditChainHead: { seq: 0, hash: null } }
      // The activity's cancellation, as Temporal signals it: at the first heartbeat, when the first rows are on their way.
      const cancel = new AbortController()
      let beats = 0
      const failed = await within(
        20_000,
        'the cancelled export',
        writeTenantRows(
          deps,
          plan,
          [],
          () => {
            beats++
            cancel.abort()
          },
          cancel.signal,
        ).then(
          () => undefined,
          (e: unknown) => e,
        ),
      )
      expect(beats).toBeGreaterThan(0)
      expect((failed as Error).name).toBe('AbortError')
      expect((await within(20_000, 'the next query on the export connection', one`select 1 as n`))[0]!.n).toBe(1)
      const left: unknown[] = []
      for await (const o of s3.listObjectsV2(bucket, '', true)) left.push(o)
      expect(left).toEqual([])
    } finally {
      await one.end({ timeout: 1 })
      await s3.removeBucket(bucket).catch(() => {})
    }
  }, 60_000)
})
