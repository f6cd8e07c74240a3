// Test files run in parallel (scripts/test.ts). A file that needs a run-wide resource no other file may use at the
// same time (today: the webhook dispatcher, which claims every tenant's undispatched events) calls
// `exclusive(resource)` at module level: it holds a Postgres advisory lock on the run's database from before its first
// test to after its last, so the files asking for one resource run one after another while every other file goes on
// beside them. The lock belongs to a connection, so a file that dies releases it with its process.
import { afterAll, beforeAll } from 'bun:test'
import { createDb, type Sql } from '../../api/platform/db'

/** The resources files take turns on, each with what it is, so a new one is added here with its reason. */
export const RESOURCES = {
  /** The dispatcher (worker/webhook-dispatcher.ts) claims every undispatched event of every tenant and delivers it with
   *  its own worker's settings (CA, retry schedule): two at once would take each other's events, and a file that
   *  needs an event to stay undispatched must not run beside one. */
  'webhook-dispatcher': 1,
} as const
export type Resource = keyof typeof RESOURCES

/** The advisory lock's class id (the first of the two-integer key): "rcp" in ASCII, apart from anything the app locks. */
const LOCK_CLASS = 0x726370
/** Waiting is not the file's own time: the other holders' files run meanwhile, one after another. */
export const LOCK_WAIT_MS = 20 * 60_000

/** Waits for the resource and holds it until the returned release is called (or the process ends). */
export async function acquire(resource: Resource): Promise<() => Promise<void>> {
  const sql: Sql = createDb(process.env.DATABASE_URL!, { max: 1, name: `rcp-test-lock-${resource}` })
  await sql`select pg_advisory_lock(${LOCK_CLASS}, ${RESOURCES[resource]})`
  // Ending the one connection releases the lock with it.
  return () => sql.end({ timeout: 5 })
}

/** Holds the resource from before the file's first test to after its last. Hooks run in the order they were
 *  registered, so this one releases before later afterAll hooks run: a file whose own hooks start and stop what uses
 *  the resource takes it with `acquire` in them instead (as test/webhooks/delivery-helpers.ts does). */
export function exclusive(resource: Resource): void {
  let release: (() => Promise<void>) | undefined
  beforeAll(async () => { release = await acquire(resource) }, LOCK_WAIT_MS)
  afterAll(async () => { await release?.() })
}
