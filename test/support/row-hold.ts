import { createDb, type Db } from '../../api/platform/db'

/** Holds rows with a key-share lock, in a transaction of its own, until the returned release is called. The
 *  housekeeping purges take their rows `for update skip locked`, so a held row stays while a test reads it: a purge may
 *  run at any moment (the runner's schedule, or another file's real housekeeping run on the shared database). An
 *  update of the row's other columns (its expiry, say) does not conflict with the lock. */
export async function holdRows(databaseUrl: string, lock: (tx: Db) => Promise<unknown>): Promise<() => Promise<void>> {
  const db = createDb(databaseUrl, { max: 1 })
  const released = Promise.withResolvers<void>()
  const locked = Promise.withResolvers<void>()
  const held = db.begin(async (tx) => {
    await lock(tx as unknown as Db)
    locked.resolve()
    await released.promise
  })
  await Promise.race([locked.promise, held])
  let ended: Promise<void> | undefined
  return () => {
    released.resolve()
    ended ??= held.then(() => db.end())
    return ended
  }
}
