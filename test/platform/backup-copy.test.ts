// The database half of the backup (scripts/backup-queries.ts) against the `postgres` driver alone, on a database of
// its own: a COPY of a few hundred KB followed by another table's COPY in one repeatable-read transaction used to
// wait forever for the second stream (docs/operations.md "Backup and restore"); a step that stalls names its table.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDb, type Sql } from '../../api/platform/db'
import { backupDatabase, defaultJobs, parseArguments } from '../../scripts/backup'
import { boundedTransaction, copyIn, copyOut, copyOutTo, StalledStep } from '../../scripts/backup-queries'

const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'backup-copy-'))
const database = `rcp_copy_${crypto.randomUUID().slice(0, 8)}`
const admin = createDb(process.env.DATABASE_URL!, { max: 1 })
let sql: Sql
let url: string

/** Fails the test instead of hanging it: the hang this file guards against never rejects on its own. */
const within = <T>(ms: number, what: string, work: Promise<T>) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms))])

beforeAll(async () => {
  await admin`create database ${admin(database)}`
  const u = new URL(process.env.DATABASE_URL!)
  u.pathname = `/${database}`
  url = u.toString()
  sql = createDb(url, { max: 2 })
  // About 700 KB of rows, then a table of eight: the shape of audit_log and edge_package_runs in the report.
  await sql`create table big (id int primary key, body text not null)`
  await sql`insert into big select i, repeat(md5(i::text), 10) from generate_series(1, 2000) i`
  await sql`create table small (id int primary key)`
  await sql`insert into small select generate_series(1, 8)`
  await sql`create table mid (id int primary key, body text not null)`
  await sql`insert into mid select i, repeat(md5(i::text), 10) from generate_series(1, 8000) i`
  await sql`create table schema_migrations (name text primary key)`
})

/** Holds an ACCESS EXCLUSIVE lock on `table` (as a migration's ALTER TABLE would) until the returned release runs. */
async function locked(table: string): Promise<() => Promise<void>> {
  const holder = createDb(url, { max: 1 })
  let release!: () => void
  let taken!: () => void
  const lockTaken = new Promise<void>((r) => {
    taken = r
  })
  const held = holder.begin(async (tx) => {
    await tx`lock table ${tx(table)} in access exclusive mode`
    taken()
    await new Promise<void>((r) => {
      release = r
    })
  })
  await lockTaken
  return async () => {
    release()
    await held
    await holder.end()
  }
}
afterAll(async () => {
  await sql?.end({ timeout: 1 })
  await admin`drop database if exists ${admin(database)} with (force)`
  await admin.end()
  rmSync(dir, { recursive: true, force: true })
})

describe('COPY TO STDOUT, one table after another in one snapshot', () => {
  test('a few hundred KB, then another table: both streams end, and the transaction commits', async () => {
    const copies = sql.begin('isolation level repeatable read read only', async (tx) => {
      for (const table of ['big', 'small', 'big']) await copyOut(tx, table, join(dir, `${table}.bin`), { stallMs: 30_000 })
      return (await tx`select count(*)::int as n from small`)[0]!.n as number
    })
    expect(await within(20_000, 'the three COPYs and the commit', copies)).toBe(8)
    expect(statSync(join(dir, 'big.bin')).size).toBeGreaterThan(600_000)
    // The files are what COPY wrote: loaded into empty tables, every row comes back.
    await sql`create table big_again (like big)`
    await sql`create table small_again (like small)`
    await within(
      20_000,
      'the restore of both',
      copyIn(
        sql,
        [
          { table: 'big_again', file: join(dir, 'big.bin') },
          { table: 'small_again', file: join(dir, 'small.bin') },
        ],
        { stallMs: 30_000 },
      ),
    )
    expect(await sql`select id, body from big_again except select id, body from big`).toHaveLength(0)
    expect((await sql`select count(*)::int as n from big_again`)[0]!.n).toBe(2000)
    expect((await sql`select count(*)::int as n from small_again`)[0]!.n).toBe(8)
    expect(readFileSync(join(dir, 'small.bin')).subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\0')
  }, 60_000)

  test('a sink slower than the network (the stream paused when CopyDone arrives): the connection still answers', async () => {
    // Small batches, each written after a pause: the driver's buffer is full when the last rows and CopyDone
    // arrive, the case where its socket stayed paused after the stream ended.
    let written = 0
    const copies = sql.begin('isolation level repeatable read read only', async (tx) => {
      for (let round = 0; round < 3; round++) {
        for (const table of ['mid', 'small']) {
          written += await copyOutTo(
            tx,
            table,
            async () => {
              await Bun.sleep(1)
            },
            { stallMs: 30_000 },
            16_384,
          )
        }
      }
      return (await tx`select count(*)::int as n from mid`)[0]!.n as number
    })
    expect(await within(40_000, 'six COPYs into a slow sink', copies)).toBe(8000)
    expect(written).toBeGreaterThan(3 * 2_500_000)
  }, 60_000)
})

describe('several connections, one snapshot', () => {
  test('a writer committing one row into each of three tables throughout: a backup by three connections holds as many of each', async () => {
    // The three largest tables, so each connection starts on one of them.
    for (const t of ['w1', 'w2', 'w3']) {
      await sql`create table ${sql(t)} (id int primary key, body text not null)`
      await sql`insert into ${sql(t)} select i, repeat(md5(i::text), 10) from generate_series(1, 20000) i`
      await sql`analyze ${sql(t)}`
    }
    let stop = false
    let committed = 0
    const writer = (async () => {
      for (let id = 20001; !stop; id++) {
        await sql`with a as (insert into w1 values (${id}, 'w')), b as (insert into w2 values (${id}, 'w')) insert into w3 values (${id}, 'w')`
        committed++
      }
    })()
    await within(
      10_000,
      'the first writes',
      (async () => {
        while (committed < 20) await Bun.sleep(5)
      })(),
    )
    const before = committed
    let result: Awaited<ReturnType<typeof backupDatabase>>
    try {
      result = await within(40_000, 'the backup by three connections', backupDatabase(url, join(dir, 'jobs'), { stallMs: 30_000 }, 3))
    } finally {
      stop = true
      await writer
    }
    expect(committed - before).toBeGreaterThan(0)
    expect(result.tables).toEqual(expect.arrayContaining(['big', 'small', 'w1', 'w2', 'w3']))
    expect(result.tables).not.toContain('schema_migrations')
    const counts: number[] = []
    for (const t of ['w1', 'w2', 'w3']) {
      await sql`create table ${sql(`${t}_again`)} (like ${sql(t)})`
      await copyIn(sql, [{ table: `${t}_again`, file: join(dir, 'jobs', 'db', `${t}.bin`) }], { stallMs: 30_000 })
      counts.push((await sql`select count(*)::int as n from ${sql(`${t}_again`)}`)[0]!.n)
    }
    expect(counts[0]).toBeGreaterThanOrEqual(20_000)
    expect(counts).toEqual([counts[0]!, counts[0]!, counts[0]!])
  }, 60_000)

  test('--jobs sets how many connections copy at once; nonsense is refused', () => {
    expect(parseArguments(['--jobs=3', 'backup', 'dir'])).toMatchObject({ verb: 'backup', dir: 'dir', jobs: 3 })
    expect(parseArguments(['backup', 'dir'])!.jobs).toBe(defaultJobs())
    expect(parseArguments(['--jobs=0', 'backup', 'dir'])).toBeUndefined()
  })
})

describe('a step that stalls', () => {
  test('a COPY that gets no answer fails naming its table, and the transaction does not wait for it', async () => {
    const release = await locked('small')
    const pool = createDb(url, { max: 1 })
    try {
      const backup = boundedTransaction(pool, 'isolation level repeatable read read only', { stallMs: 500 }, async (tx) => {
        await copyOut(tx, 'big', join(dir, 'stall-big.bin'), { stallMs: 500 })
        await copyOut(tx, 'small', join(dir, 'stall-small.bin'), { stallMs: 500 })
      })
      const err = await within(
        20_000,
        'the stalled backup',
        backup.then(
          () => undefined,
          (e: unknown) => e,
        ),
      )
      expect(err).toBeInstanceOf(StalledStep)
      expect((err as StalledStep).step).toBe('COPY small TO STDOUT')
      expect((err as Error).message).toContain('no progress for 0.5 s')
    } finally {
      await within(20_000, 'ending the stalled pool', pool.end({ timeout: 1 }))
      await release()
    }
  }, 60_000)

  test('a restore into a table that gets no answer fails naming it', async () => {
    await sql`create table small_locked (like small)`
    const release = await locked('small_locked')
    const pool = createDb(url, { max: 1 })
    try {
      const err = await within(
        20_000,
        'the stalled restore',
        copyIn(pool, [{ table: 'small_locked', file: join(dir, 'small.bin') }], { stallMs: 500 }).then(
          () => undefined,
          (e: unknown) => e,
        ),
      )
      expect(err).toBeInstanceOf(StalledStep)
      expect((err as StalledStep).step).toBe('COPY small_locked FROM STDIN')
    } finally {
      await within(20_000, 'ending the stalled pool', pool.end({ timeout: 1 }))
      await release()
    }
    expect((await sql`select count(*)::int as n from small_locked`)[0]!.n).toBe(0)
  }, 60_000)

  test('`bun scripts/backup.ts backup` exits 1 and names the table, with the limit from --stall-timeout', async () => {
    const release = await locked('small')
    try {
      const run = Bun.spawn([process.execPath, 'scripts/backup.ts', '--stall-timeout=1', 'backup', join(dir, 'cli')], {
        env: { ...process.env, DATABASE_URL: url },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [stderr, exitCode] = await within(30_000, 'the stalled command', Promise.all([new Response(run.stderr).text(), run.exited]))
      expect(exitCode).toBe(1)
      expect(stderr).toContain('backup failed: COPY small TO STDOUT: no progress for 1 s')
    } finally {
      await release()
    }
  }, 60_000)
})
