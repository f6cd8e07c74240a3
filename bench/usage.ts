// Usage metering's costs (issue 38, "Performance"): `bun bench/usage.ts [--events 10000000] [--tenants 1000]` plus the
// harness's flags (--quick seeds 1,000,000 events). Results in bench/results/usage.json.
//
// Rows, each against its baseline measured in the same run (paired: beside it, round after round, order swapped):
//  1. What metering adds to a package build: the build's finish transaction (the package row marked ready and the
//     edge_package.ready event published: an UPDATE and an outbox INSERT) with the two usage events recordUsage
//     writes in it, against the same transaction without them. Transactions per second over one connection; the
//     added time per build is 1/with - 1/without, read against a build's duration (bench/README.md).
//  2. What metering adds to a webhook delivery: the attempt's record transaction (an attempt INSERT and the message's
//     UPDATE, on tables of the bench's own) with the one usage event recordUsage writes in it, against the same
//     transaction without it; the added time per delivery is read against a delivery's share of the fan-out's time.
//  3. The usage summary of one tenant's month, as the service runs it (its totals and its rows by project and day:
//     two grouped reads of usage_events), in a table of --events events of --tenants tenants over twelve months,
//     seeded by SQL. p50 over one connection; target < 50 ms.
import { publishEvent } from '../api/events/service'
import { createDb, type Sql } from '../api/platform/db'
import { groupUsage } from '../api/usage/queries'
import { recordUsage } from '../api/usage/record'
import { benchmark, type Measure, type Sample } from './harness'
import { quantile } from './one-at-a-time'

const say = (msg: string) => console.error(`[bench] ${msg}`)
const MONTHS = 12

/** Runs `once` back to back for `seconds`; `once` answers the milliseconds of its measured part (what it prepares
 *  is left out), and the rate is per second of measured time. */
async function loop(seconds: number, once: () => Promise<number>): Promise<Sample> {
  const times: number[] = []
  const end = performance.now() + seconds * 1000
  while (performance.now() < end) times.push(await once())
  const measured = times.reduce((a, b) => a + b, 0) / 1000
  times.sort((a, b) => a - b)
  return { rate: times.length / measured, p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) }
}
const timed = async (fn: () => Promise<unknown>) => {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

await benchmark('usage', { events: { type: 'string' }, tenants: { type: 'string' } }, async (h) => {
  const events = Number(h.flags.events ?? (h.flags.quick ? 1_000_000 : 10_000_000))
  const tenants = Number(h.flags.tenants ?? 1000)
  const pg = await h.postgres()
  const sql: Sql = createDb(pg.url, { max: 2 })
  h.own({ stop: () => sql.end() })

  // One tenant with a package row to flip, as the finish transaction does.
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('bench', ${`bench-${crypto.randomUUID().slice(0, 8)}`}) returning id`
  const tenantId = tenant!.id
  await sql`create table bench_package (id uuid primary key, tenant_id uuid, status text, size_bytes bigint)`
  let n = 0
  const finish = (metered: boolean) => async () => {
    const id = crypto.randomUUID()
    const i = ++n
    await sql`insert into bench_package (id, tenant_id, status, size_bytes) values (${id}, ${tenantId}, 'building', null)`
    return timed(() =>
      sql.begin(async (tx) => {
        await tx`update bench_package set status = 'ready', size_bytes = ${1_000_000 + i} where tenant_id = ${tenantId} and id = ${id} and status = 'building'`
        await publishEvent(tx, tenantId, 'edge_package.ready', {
          packageId: id,
          modelVersionId: id,
          embodimentProfileId: id,
          targetArch: 'cpu',
          mode: 'remote_ws',
          sizeBytes: 1_000_000 + i,
          sha256: 'a'.repeat(64),
        })
        if (!metered) return
        const base = { tenantId, projectId: null, occurredAt: new Date() }
        await recordUsage(tx, { ...base, meter: 'edge_package.builds', quantity: 1, idempotencyKey: `edge_package.builds:${id}` })
        await recordUsage(tx, { ...base, meter: 'edge_package.bytes', quantity: 1_000_000 + i, idempotencyKey: `edge_package.bytes:${id}` })
      }),
    )
  }
  // A message and its attempts, shaped as recordAttempt writes them: the attempt row and the message's status.
  await sql`create table bench_message (id uuid primary key, tenant_id uuid, status text, attempt_count int)`
  await sql`create table bench_attempt (id uuid primary key, message_id uuid, attempted_at timestamptz, succeeded bool, duration_ms int, response_status int)`
  const attempt = (metered: boolean) => async () => {
    const messageId = crypto.randomUUID()
    await sql`insert into bench_message (id, tenant_id, status, attempt_count) values (${messageId}, ${tenantId}, 'pending', 0)`
    return timed(() =>
      sql.begin(async (tx) => {
        const attemptId = crypto.randomUUID()
        const at = new Date()
        await tx`insert into bench_attempt (id, message_id, attempted_at, succeeded, duration_ms, response_status) values (${attemptId}, ${messageId}, ${at}, true, 12, 204)`
        await tx`update bench_message set status = 'succeeded', attempt_count = attempt_count + 1 where id = ${messageId}`
        if (!metered) return
        await recordUsage(tx, {
          tenantId,
          projectId: null,
          meter: 'webhook.deliveries',
          quantity: 1,
          occurredAt: at,
          idempotencyKey: `webhook.deliveries:${attemptId}`,
        })
      }),
    )
  }
  const seconds = h.settings.duration

  let subject = ''
  const monthFrom = new Date(Date.UTC(2026, 5, 1))
  const monthTo = new Date(Date.UTC(2026, 6, 1))
  const summary: Measure = {
    name: `usage summary: one tenant's month (totals + by project and day), ${events.toLocaleString('en')} events of ${tenants} tenants`,
    maxP50Ms: 50,
    async setup() {
      const t0 = performance.now()
      const ids = await sql<{ id: string }[]>`
        insert into tenants (name, slug) select 'usage ' || i, 'usage-' || i || '-' || substr(md5(random()::text), 1, 6) from generate_series(1, ${tenants}::int) i returning id`
      subject = ids[Math.floor(ids.length / 2)]!.id
      const meters = ['edge_package.builds', 'edge_package.bytes', 'webhook.deliveries', 'api_requests.session', 'storage.byte_hours']
      const chunk = 1_000_000
      for (let done = 0; done < events; done += chunk) {
        const size = Math.min(chunk, events - done)
        await sql`
          insert into usage_events (tenant_id, meter, quantity, occurred_at, idempotency_key, payload_hash)
          select (${ids.map((r) => r.id)}::uuid[])[1 + (i % ${tenants})], (${meters}::text[])[1 + (i / ${tenants}) % ${meters.length}],
                 1 + (i % 1000), timestamptz '2026-01-01' + ((i * 7919) % (${MONTHS} * 30 * 86400)) * interval '1 second',
                 'seed-' || i, ${Buffer.alloc(32)}
            from generate_series(${done + 1}::bigint, ${done + size}::bigint) i`
        say(`seeded ${(done + size).toLocaleString('en')} of ${events.toLocaleString('en')} events`)
      }
      await sql`vacuum analyze usage_events`
      const [{ n: mine }] = (await sql`
        select count(*)::int as n from usage_events where tenant_id = ${subject} and occurred_at >= ${monthFrom} and occurred_at < ${monthTo}`) as unknown as [
        { n: number },
      ]
      say(`seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s; the measured tenant has ${mine} events in its month`)
    },
    run: () =>
      loop(seconds, () => {
        const filter = { tenantId: subject, from: monthFrom, to: monthTo, projectId: null, meter: null }
        return timed(() => Promise.all([groupUsage(sql, filter, { project: true, day: true }), groupUsage(sql, filter, { project: false, day: false })]))
      }),
  }

  return {
    paired: true,
    rounds: h.settings.rounds,
    baselines: [
      { name: 'finish transaction without metering (UPDATE + outbox INSERT)', run: () => loop(seconds, finish(false)) },
      { name: 'attempt record without metering (INSERT + UPDATE)', run: () => loop(seconds, attempt(false)) },
    ],
    rows: [
      {
        name: 'finish transaction with metering (+ two usage events)',
        targetOf: 'finish transaction without metering (UPDATE + outbox INSERT)',
        run: () => loop(seconds, finish(true)),
      },
      {
        name: 'attempt record with metering (+ one usage event)',
        targetOf: 'attempt record without metering (INSERT + UPDATE)',
        run: () => loop(seconds, attempt(true)),
      },
      summary,
    ],
  }
})
