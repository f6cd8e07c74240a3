import type { Db } from '../platform/db'
import type { HeldCoverage } from '../platform/held'
import type { SealedColumn } from '../platform/keyring'

export type ClaimResult = { kind: 'claimed' } | { kind: 'conflict'; reason: 'different_request' | 'in_flight' } | { kind: 'replay'; sealed: Buffer }

/** Takes the key for this request, or reports why not. A key whose holder died (lock expired) with the same
 *  request can be taken over; an expired record is replaced. Atomic: concurrent callers see one winner. */
export async function claimKey(db: Db, a: { scope: string; key: string; requestHash: string; ttlHours: number; lockSeconds: number }): Promise<ClaimResult> {
  const won = await db`
    insert into idempotency_keys (scope, key, request_hash, state, locked_until, expires_at)
    values (${a.scope}, ${a.key}, ${a.requestHash}, 'in_flight',
            now() + make_interval(secs => ${a.lockSeconds}), now() + make_interval(hours => ${a.ttlHours}))
    on conflict (scope, key) do update
       set request_hash = excluded.request_hash, state = 'in_flight', locked_until = excluded.locked_until,
           expires_at = excluded.expires_at, created_at = now(), response_status = null, response_body = null
     where idempotency_keys.expires_at <= now()
        or (idempotency_keys.state = 'in_flight' and idempotency_keys.locked_until <= now()
            and idempotency_keys.request_hash = excluded.request_hash)
    returning 1`
  if (won.length === 1) return { kind: 'claimed' }
  const [row] = await db<{ request_hash: string; state: string; response_body: Buffer | null }[]>`
    select request_hash, state, response_body from idempotency_keys where scope = ${a.scope} and key = ${a.key}`
  if (!row) return claimKey(db, a) // purged between the two statements: try again
  if (row.request_hash !== a.requestHash) return { kind: 'conflict', reason: 'different_request' }
  if (row.state === 'in_flight' || !row.response_body) return { kind: 'conflict', reason: 'in_flight' }
  return { kind: 'replay', sealed: row.response_body }
}

export async function completeKey(db: Db, a: { scope: string; key: string; status: number; sealed: Buffer }): Promise<void> {
  await db`
    update idempotency_keys set state = 'completed', locked_until = null, response_status = ${a.status}, response_body = ${a.sealed}
     where scope = ${a.scope} and key = ${a.key} and state = 'in_flight'`
}

/** Deletes up to `limit` expired keys; returns how many. SKIP LOCKED: a key an API request is still holding is
 *  left for the next run instead of waited on. The keys (with the responses they stored) of a tenant held whole, and
 *  the per-user keys of a held person, stay while the hold lasts: a key is scoped to a tenant or a user, never to a
 *  project, so a project hold keeps none. */
export async function deleteExpiredKeys(db: Db, limit: number, held: HeldCoverage): Promise<number> {
  const scopes = [...held.tenantIds.map((t) => `tenant:${t}`), ...held.accountUserIds.map((u) => `user:${u}`)]
  const result = await db`
    delete from idempotency_keys where (scope, key) in (
      select scope, key from idempotency_keys
       where expires_at < now() and scope <> all(${scopes}::text[])
       limit ${limit} for update skip locked)`
  return result.count
}

/** Stored responses (they may carry a session cookie or a one-time secret), for the re-seal
 *  (activities/reseal-batch.ts). The key is (scope, key); the cursor is both, JSON-encoded. */
export const idempotentResponses: SealedColumn = {
  name: 'idempotency_keys.response_body',
  purpose: 'idempotency',
  batch: async (db, after, limit) => {
    const [scope, key] = after ? (JSON.parse(after) as [string, string]) : [null, null]
    const rows = await db<{ scope: string; key: string; sealed: Buffer }[]>`
      select scope, key, response_body as sealed from idempotency_keys
       where response_body is not null and (${scope}::text is null or (scope, key) > (${scope}, ${key}))
       order by scope, key limit ${limit}`
    return rows.map((r) => ({ id: JSON.stringify([r.scope, r.key]), sealed: r.sealed }))
  },
  replace: async (db, id, from, to) => {
    const [scope, key] = JSON.parse(id) as [string, string]
    return (await db`update idempotency_keys set response_body = ${to} where scope = ${scope} and key = ${key} and response_body = ${from}`).count === 1
  },
}
