// The inbox count (issue 36, "Performance"): `bun bench/notifications.ts [--notifications 100000]` plus the harness's
// flags. One user with 100,000 notifications (half of them read, seeded straight into the bench's database), and:
//  - baseline: the bare SQL count of that user's unread notifications (`select count(*) … where read_at is null`),
//    sent through the same driver (postgres.js) from this process, one query at a time;
//  - the count the API answers (api/notifications/queries.ts inboxCounts: one row of notification_inboxes) through
//    the same driver, one at a time;
//  - GET /v1/users/me/notifications/count over HTTP with the user's session, one connection.
// Target p50 < 5 ms for the two rows, and the rows' rates against the bare count's (the ratio the table prints).
// Results in bench/results/notifications.json.
import { inboxCounts } from '../api/notifications/queries'
import { createDb } from '../api/platform/db'
import { benchmark } from './harness'
import { oneAtATime } from './one-at-a-time'
import { must, ownerIn } from './rows'

const BARE = 'bare SQL count(*) of the unread, same driver'

await benchmark('notifications', { notifications: { type: 'string' } }, async (h) => {
  const total = Number(h.flags.notifications ?? 100_000)
  const pg = await h.postgres()
  const api = await h.api(pg.url)
  const sql = createDb(pg.url, { max: 1 })
  h.own({ stop: () => sql.end({ timeout: 5 }) })

  const owner = await ownerIn(api)
  const userId = must(await api.call('GET', '/v1/users/me', { headers: owner.session }), 200, 'me').json.data.user.id as string
  // Seeded as notify() leaves them: numbered 1..N, the inbox's counters matching (every other one read).
  await sql`
    insert into notifications (user_id, seq, tenant_id, kind, fields, dedupe_key, read_at)
    select ${userId}, i, ${owner.tenantId}, 'audit_export.ready', jsonb_build_object('exportId', gen_random_uuid(), 'entries', i), 'bench-' || i,
           case when i % 2 = 0 then now() end
      from generate_series(1, ${total}) i`
  await sql`
    insert into notification_inboxes (user_id, last_seq, seen_seq, unread_count)
    values (${userId}, ${total}, ${total - 10}, (select count(*) from notifications where user_id = ${userId} and read_at is null))
    on conflict (user_id) do update set last_seq = excluded.last_seq, seen_seq = excluded.seen_seq, unread_count = excluded.unread_count`
  await sql`vacuum analyze notifications`
  const [bare] = await sql<{ n: string }[]>`select count(*) as n from notifications where user_id = ${userId} and read_at is null`
  const counted = await inboxCounts(sql, userId)
  if (counted.unread !== Number(bare!.n)) throw new Error(`the inbox says ${counted.unread} unread, the table ${bare!.n}`)
  const viaHttp = must(await api.call('GET', '/v1/users/me/notifications/count', { headers: owner.session }), 200, 'count').json.data
  if (viaHttp.unread !== counted.unread || viaHttp.unseen !== 10) throw new Error(`the API counts ${JSON.stringify(viaHttp)}`)

  return {
    baselines: [{ name: BARE, run: oneAtATime(h, () => sql`select count(*) from notifications where user_id = ${userId} and read_at is null`) }],
    rows: [
      { name: 'the inbox count (inboxCounts), same driver', run: oneAtATime(h, () => inboxCounts(sql, userId)), targetOf: BARE, target: 1, maxP50Ms: 5 },
      h.http(api, {
        name: 'GET /v1/users/me/notifications/count (session, 1 connection)',
        method: 'GET',
        path: '/v1/users/me/notifications/count',
        headers: owner.session,
        connections: 1,
        targetOf: BARE,
        target: 1,
        maxP50Ms: 5,
      }),
    ],
  }
})
