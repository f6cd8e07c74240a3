// The database half of scripts/backup.ts: every table's rows through COPY (binary), and back. Every step is bounded
// by a stall limit (docs/operations.md "Backup and restore"): a step that makes no progress for that long fails
// naming its table instead of waiting forever.
import { createReadStream, writeSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { type Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Db, Sql } from '../api/platform/db'

/** Tables whose rows are not data: buckets that start full (rate_budgets), and the migrations' own record (the
 *  restore migrates the empty database first). Audit entries waiting to be sealed (audit_inbox) are committed
 *  entries: they are backed up. */
export const NOT_BACKED_UP = new Set(['rate_budgets', 'schema_migrations'])

/** How long a step may go without progress (no byte read or written, no answer) before it fails. */
export interface StepLimits {
  stallMs: number
}
export const DEFAULT_STALL_MS = 60_000

export class StalledStep extends Error {
  constructor(
    readonly step: string,
    stallMs: number,
  ) {
    super(`${step}: no progress for ${stallMs / 1000} s (the stall limit, --stall-timeout); the step was abandoned`)
    this.name = 'StalledStep'
  }
}

/** Runs `work`, failing with StalledStep when `progress` is not called for `stallMs` (the limit restarts at each
 *  call). `onStall` releases what the step holds; the step's own promise may never settle after that. */
export async function bounded<T>(
  step: string,
  { stallMs }: StepLimits,
  work: (progress: () => void) => Promise<T>,
  onStall: () => void = () => {},
): Promise<T> {
  // progress() runs once per row of a COPY: it only notes the time, and one timer looks at it when it is due.
  let last = performance.now()
  let timer: ReturnType<typeof setTimeout> | undefined
  const watchdog = new Promise<never>((_, reject) => {
    const check = () => {
      const idle = performance.now() - last
      if (idle < stallMs) return void (timer = setTimeout(check, stallMs - idle))
      onStall()
      reject(new StalledStep(step, stallMs))
    }
    timer = setTimeout(check, stallMs)
  })
  try {
    return await Promise.race([
      work(() => {
        last = performance.now()
      }),
      watchdog,
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** sql.begin(mode, work), bounded at both ends and in the middle: the BEGIN and the COMMIT each within the stall
 *  limit, and a StalledStep inside fails the whole at once. (The driver would send ROLLBACK behind the stalled
 *  statement and wait for it forever; the caller ends the pool, which drops the transaction with the connection.) */
export async function boundedTransaction<T>(sql: Sql, mode: string, limits: StepLimits, work: (tx: Db) => Promise<T>): Promise<T> {
  let fail!: (err: unknown) => void
  const failed = new Promise<never>((_, reject) => {
    fail = reject
  })
  let timer = setTimeout(() => fail(new StalledStep(`BEGIN ${mode}`, limits.stallMs)), limits.stallMs)
  const done = sql.begin(mode, async (tx) => {
    clearTimeout(timer)
    let result: T
    try {
      result = await work(tx)
    } catch (err) {
      if (err instanceof StalledStep) fail(err)
      throw err
    }
    timer = setTimeout(() => fail(new StalledStep('COMMIT', limits.stallMs)), limits.stallMs)
    return result
  }) as Promise<T>
  done.catch(() => {}) // after a stall, its rejection (the connection ended) has no one left to tell
  try {
    return await Promise.race([done, failed])
  } finally {
    clearTimeout(timer)
  }
}

/** A pass-through stage that reports each chunk as progress (a 'data' listener of its own would start the source
 *  flowing before its consumer is attached, and lose what it read). */
export const progressTap = (progress: () => void) =>
  new Transform({
    transform(chunk, _encoding, callback) {
      progress()
      callback(null, chunk)
    },
  })

export async function tablesToBackUp(sql: Db): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`select tablename as name from pg_tables where schemaname = 'public' order by tablename`
  return rows.map((r) => r.name).filter((t) => !NOT_BACKED_UP.has(t))
}

/** The tables to back up, largest first (pages at the last vacuum or analyze: pg_class's estimate takes no lock,
 *  where pg_relation_size would wait behind any ACCESS EXCLUSIVE lock before the COPY could name its table). Several
 *  connections take them in this order, so the longest starts first and the short ones fill in around it. */
export async function tablesLargestFirst(sql: Db): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select t.tablename as name from pg_tables t
      join pg_namespace n on n.nspname = t.schemaname
      join pg_class c on c.relnamespace = n.oid and c.relname = t.tablename
     where t.schemaname = 'public'
     order by c.relpages desc, t.tablename`
  return rows.map((r) => r.name).filter((t) => !NOT_BACKED_UP.has(t))
}

/** The snapshot of the caller's transaction, for other connections to share (valid while that transaction is open). */
export async function exportSnapshot(tx: Db): Promise<string> {
  return (await tx<{ id: string }[]>`select pg_export_snapshot() as id`)[0]!.id
}

/** Makes `tx` (repeatable read, nothing run in it yet) see exactly the exported snapshot `id`. SET takes no
 *  parameters, so the id is checked to be one (hex groups and dashes) before it is written into the statement. */
export async function importSnapshot(tx: Db, id: string): Promise<void> {
  if (!/^[0-9A-F]+(-[0-9A-F]+)+$/i.test(id)) throw new Error(`not a snapshot id: ${id}`)
  await tx.unsafe(`set transaction snapshot '${id}'`)
}

export async function appliedMigrations(sql: Db): Promise<string[]> {
  return (await sql<{ name: string }[]>`select name from schema_migrations order by name`).map((r) => r.name)
}

/** Bytes gathered before one write to the file: a COPY arrives as one message per row, and a write per row costs
 *  more than the COPY itself. Also the bound on what one table holds in memory (three of these, plus the driver's
 *  buffer), whatever its size. */
const WRITE_BATCH = 1 << 20
/** Full batches that may wait for their write before the socket is paused. Pausing at the first one stopped the
 *  COPY for a wake-up of the writer and of the server at every MB, which on a loaded machine took longer than the
 *  write: 925 MB took 35 s while the process used 3.7 s of CPU. */
const QUEUED_BATCHES = 4

/** One table in one consistent snapshot with the others (the caller's repeatable-read transaction).
 *
 *  postgres@3.4.9 pauses its socket when a COPY chunk finds the stream's buffer full, and resumes it only when the
 *  stream is read again. When the last chunks and CopyDone arrive in one read (a table of a few hundred KB is
 *  enough), the stream ends with its socket paused: the connection never reads another answer, and the next table's
 *  COPY waits forever (porsager/postgres#499, fix proposed in #1016). So the rows are taken as they come, in batches
 *  written to the file, and once the stream has ended its read hook (the driver's own socket resume) runs once
 *  more, so the connection reads on whatever the chunks looked like. */
export async function copyOut(tx: Db, table: string, file: string, limits: StepLimits): Promise<number> {
  const out = await open(file, 'w')
  try {
    // A synchronous write into the page cache, as psql's: no round trip through the thread pool per batch, whose
    // completion waits for the scheduler on a loaded machine.
    const writeAll = async (chunk: Buffer) => {
      for (let offset = 0; offset < chunk.length; ) offset += writeSync(out.fd, chunk, offset)
    }
    return await copyOutTo(tx, table, writeAll, limits)
  } finally {
    await out.close()
  }
}

/** copyOut into any sink: `write` is given batches of about WRITE_BATCH bytes, one at a time. */
export async function copyOutTo(tx: Db, table: string, write: (chunk: Buffer) => Promise<void>, limits: StepLimits, batchBytes = WRITE_BATCH): Promise<number> {
  let stream: Readable | undefined
  return await bounded(
    `COPY ${table} TO STDOUT`,
    limits,
    async (progress) => {
      stream = (await tx`copy ${tx(table)} to stdout with (format binary)`.readable()) as Readable
      progress()
      const bytes = await drainTo(stream, write, progress, batchBytes)
      // The driver's read hook is its socket's resume: without it a COPY that ended paused stops the connection.
      ;(stream as unknown as { _read(size: number): void })._read(0)
      return bytes
    },
    () => stream?.destroy(),
  )
}

/** The stream into `write` in batches of `batchBytes`, one write at a time.
 *
 *  The rows are taken from the driver itself: it hands each row to the stream's push(), and push() is replaced here by
 *  a copy into the batch. A Readable's own push and 'data' event per row cost more CPU than the driver's parsing
 *  (on 1.4 million short rows, most of the client's time); psql has neither. Backpressure is the driver's own: push()
 *  answers false while QUEUED_BATCHES full batches wait for their writes, the driver pauses its socket, and the stream's
 *  read hook (the driver's socket resume) starts it again once the batches are written. Rows the stream buffered
 *  before the replacement are read out of it first. */
function drainTo(stream: Readable, write: (chunk: Buffer) => Promise<void>, progress: () => void, batchBytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    // Written batches are filled again: a new one per MB would leave the collector hundreds of MB to catch up with.
    const spare: Buffer[] = []
    let batch: Buffer = Buffer.allocUnsafe(batchBytes)
    let used = 0
    const full: Buffer[] = []
    let total = 0
    let writing = false
    let ended = false
    let paused = false
    const resumeSocket = () => (stream as unknown as { _read(size: number): void })._read(0)
    const next = () => {
      if (writing) return
      let chunk = full.shift()
      if (!chunk && ended && used > 0) {
        chunk = batch.subarray(0, used)
        used = 0
      }
      if (chunk) {
        const bytes = chunk.length
        writing = true
        const written = chunk
        write(chunk).then(() => {
          writing = false
          if (written.length === batchBytes) spare.push(written)
          total += bytes
          progress()
          next()
        }, reject)
        return
      }
      if (paused) {
        paused = false
        resumeSocket()
      }
      if (ended) resolve(total)
    }
    const take = (chunk: Buffer) => {
      for (let offset = 0; offset < chunk.length; ) {
        const copied = chunk.copy(batch, used, offset)
        used += copied
        offset += copied
        if (used === batchBytes) {
          full.push(batch)
          batch = spare.pop() ?? Buffer.allocUnsafe(batchBytes)
          used = 0
        }
      }
    }
    stream.on('error', reject)
    const state = (stream as unknown as { _readableState?: { ended?: boolean } })._readableState
    for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) take(chunk)
    if (state?.ended) ended = true
    ;(stream as unknown as { push(chunk: Buffer | null): boolean }).push = (chunk) => {
      progress()
      if (chunk === null) {
        ended = true
        next()
        return false
      }
      take(chunk)
      if (full.length === 0) return true
      next()
      if (full.length < QUEUED_BATCHES) return true
      paused = true
      return false
    }
    next()
  })
}

/** Loads every table in one transaction with triggers and foreign keys off (session_replication_role = replica):
 *  the rows are already consistent, and the triggers that keep copies and counts must not run again on rows that
 *  hold their results.
 *  Needs a role that may set session_replication_role (a superuser, or pg_database_owner on PostgreSQL 15+ with
 *  the grant). */
export async function copyIn(sql: Sql, files: { table: string; file: string }[], limits: StepLimits): Promise<void> {
  await boundedTransaction(sql, 'read write', limits, async (tx) => {
    await tx`set local session_replication_role = replica`
    for (const { table, file } of files) {
      const source = createReadStream(file, { highWaterMark: WRITE_BATCH })
      await bounded(
        `COPY ${table} FROM STDIN`,
        limits,
        async (progress) => {
          const sink = await tx`copy ${tx(table)} from stdin with (format binary)`.writable()
          progress()
          await pipeline(source, progressTap(progress), sink)
        },
        () => source.destroy(),
      )
    }
    // COPY wrote the identity columns' values as they were; their sequences continue after the largest.
    const identities = await tx<{ table: string; column: string }[]>`
      select table_name as table, column_name as column from information_schema.columns where table_schema = 'public' and is_identity = 'YES'`
    for (const { table, column } of identities) {
      await tx`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${tx(column)}) from ${tx(table)}), 0) + 1, false)`
    }
  })
}
