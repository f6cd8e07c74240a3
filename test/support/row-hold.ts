import { createDb, type Db } from '../../api/platform/db'

/** A transaction of its own that holds what `lock` locked until `release` is called; `pid` is its backend, for
 *  pg_blocking_pids. */
export interface RowHold {
  pid: number
  release: () => Promise<void>
}

/** Holds rows locked, in a transaction of its own, until released. With `for key share` a housekeeping purge (which
 *  takes its rows `for update skip locked`, and may run at any moment: the runner's schedule, or another file's real
 *  housekeeping run on the shared database) passes the row by while a test reads it, and an update of the row's other
 *  columns (its expiry, say) does not conflict with the lock. With `for update` it stands for a sealer at work. */
export async function holdRows(databaseUrl: string, lock: (tx: Db) => Promise<unknown>): Promise<RowHold> {
  const db = createDb(databaseUrl, { max: 1 })
  const released = Promise.withResolvers<void>()
  const locked = Promise.withResolvers<number>()
  const held = db.begin(async (tx) => {
    await lock(tx as unknown as Db)
    locked.resolve((await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid)
    await released.promise
  })
  const pid = await Promise.race([locked.promise, held.then(() => 0)])
  let ended: Promise<void> | undefined
  return {
    pid,
    release: () => {
      released.resolve()
      ended ??= held.then(() => db.end())
      return ended
    },
  }
}
