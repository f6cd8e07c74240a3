// The audit trail's cost (issue 18, "Performance"): `bun bench/audit.ts [--audit-rows 10000000] [--only writes,export]`
// plus the harness's flags (4 rounds of 5 s by default; --quick seeds 1,000,000 rows). --only picks rows by part:
// sign-in, writes, page, export (default all; the seeding is skipped when neither page nor export is asked for).
// Results in bench/results/audit.json.
//
// Two builds side by side, each a Postgres and an API process of its own, started from the same code:
//  - audited: the build as shipped.
//  - "the same build with the audit insert removed": after migration, its database's audit_append (the one function
//    every recordAudit call goes through, migrations/0024) is replaced with a pass-through that inserts nothing and
//    hands back an entry with no tenant, so no audit.entry event is published either. The switch is made in that
//    throw-away database by this file alone: no setting, flag or environment variable of the product turns auditing
//    off, and none is added for this.
// Both APIs run with CREDENTIAL_CACHE_FENCE_MS=0: a role change otherwise answers only after sleeping the PAT cache's
// fence (half a second), which would make both builds equally slow and the ratio meaningless. Sessions are not cached,
// so only the audit-log page's PAT is read from Postgres on every request instead of from the cache.
//
// Rows, each read against its baseline measured in the same run:
//  1. POST /v1/sessions (password) against bare argon2id (bench/argon2-baseline.ts). Target ≥ 95%. Measured a second
//     time against the same sign-ins on the build with the audit insert removed (target ≥ 95% too): what recording
//     costs a sign-in, apart from what the rest of the sign-in costs beside its argon2id.
//  2. POST /v1/api-keys (session cookie + CSRF, a new name each request) and PATCH /v1/tenants/current/memberships/:id
//     (each request flips one member between viewer and researcher, so every one is a real, audited change), each
//     against the same requests on the build with the audit insert removed. Target ≥ 90%. Driven by --connections
//     concurrent fetch loops from this process, not wrk, because every request needs its own body. Each is measured
//     twice: every loop in one tenant (one chain, and the tenant's own membership lock for the role change: the
//     worst case) and every loop in a tenant of its own (the platform's usual mix, many tenants each on its own
//     chain). Rows 1 and 2 are paired (bench/harness.ts Plan.paired): each measured beside its baseline, round after
//     round, the order swapped every round, and read as the median of the rounds' ratios.
//  3. A one-day page of one tenant's trail (action prefix api_key., 50 entries, 1 connection) with 1,000,000 entries
//     of the tenant in a table of 10,000,000 (ten tenants, 400 days: ~2,500 of the tenant's entries a day), seeded
//     straight into the audited build's audit_log. Target p50 < 20 ms. The appends of row 2 go into that table too.
//  4. The export (≥ 50,000 entries/s, worker RSS within 50 MB between a 100k and a 1M export): the export activity
//     (activities/audit-export.ts writeAuditExport, the code the worker runs) called in this process against the
//     seeded tenant, streaming gzip NDJSON into a MinIO of the bench's own.
import { join } from 'node:path'
import type { ParseArgsConfig } from 'node:util'
import { asyncLocalStorage } from '@temporalio/activity'
import { createActivities } from '../activities'
import { AUDIT_EXPORT_BATCH } from '../activities/audit-export'
import { chainHead, sealAuditChains } from '../api/audit/queries'
import { loadConfig } from '../api/platform/config'
import { createLogger } from '../api/platform/log'
import { composeServices } from '../api/compose'
import { createWorkerMetrics } from '../worker/metrics'
import { CACHE_DIR, freePort, newSecretKey, startMinio } from '../scripts/platform'
import { s3For } from '../api/storage/s3'
import { auditCatalogue, type AuditAction } from '../api/audit/catalogue'
import { createDb, type Sql } from '../api/platform/db'
import { ARGON2, argon2Baseline } from './argon2-baseline'
import { benchmark, type BenchContext, type Harness, type Measure, type Sample } from './harness'
import { must, ownerIn, patIn, signIn, unique } from './rows'
import { quantile } from './one-at-a-time'

const DAY_MS = 86_400_000
const SPAN_DAYS = 400
const TENANTS = 10
const say = (msg: string) => console.error(`[bench] ${msg}`)

/** One connection to the bench database for `fn`, closed after it. */
async function withDb<T>(databaseUrl: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = createDb(databaseUrl, { max: 1 })
  try {
    return await fn(sql)
  } finally {
    await sql.end()
  }
}

/** "The same build with the audit insert removed": audit_append keeps its signature and inserts nothing. */
const removeAuditInsert = (databaseUrl: string) =>
  withDb(databaseUrl, (sql) =>
    sql.unsafe(`
  create or replace function audit_append(e audit_log) returns audit_log language plpgsql as $$
  begin
    e.seq := 0; e.hash := ''::bytea; e.occurred_at := clock_timestamp(); e.tenant_id := null;
    return e;
  end $$`),
  )

/** `connections` request loops for warm-up then the measured duration; `send(worker)` makes one request, and every
 *  answer must have status `expect`. A loop keeps its own state across calls (role changes alternate per member). */
function closedLoop(h: Harness, connections: number, expect: number, send: (worker: number) => Promise<Response>): () => Promise<Sample> {
  const burst = async (seconds: number) => {
    const deadline = performance.now() + seconds * 1000
    const latencies: number[] = []
    let unexpected = 0
    let example = ''
    await Promise.all(
      Array.from({ length: connections }, async (_, worker) => {
        while (performance.now() < deadline) {
          const t0 = performance.now()
          const res = await send(worker)
          const body = await res.text()
          latencies.push(performance.now() - t0)
          if (res.status !== expect) {
            unexpected++
            example ||= `${res.status} ${body.slice(0, 300)}`
          }
        }
      }),
    )
    return { latencies, unexpected, example, seconds: seconds + (performance.now() - deadline) / 1000 }
  }
  return async () => {
    if (h.settings.warmup > 0) await burst(h.settings.warmup)
    const m = await burst(h.settings.duration)
    if (m.unexpected === m.latencies.length) throw new Error(`every request failed, e.g. ${m.example}`)
    const sorted = m.latencies.sort((a, b) => a - b)
    return {
      rate: (m.latencies.length - m.unexpected) / m.seconds,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99),
      warning: m.unexpected ? `${m.unexpected} of ${m.latencies.length} answers were not ${expect}, e.g. ${m.example}` : undefined,
    }
  }
}

/** Where a row's concurrent request loops act: all in one tenant (one chain head: the worst case for the chain), or
 *  each loop in a tenant of its own (the platform's usual mix: many tenants, each with its own chain). */
type Spread = 'one tenant' | 'a tenant each'

/** Each loop's owner session: one shared owner for 'one tenant', a fresh owner of a fresh tenant per loop otherwise. */
async function owners(api: BenchContext, connections: number, spread: Spread) {
  const made = spread === 'one tenant' ? [await ownerIn(api)] : await Promise.all(Array.from({ length: connections }, () => ownerIn(api)))
  return Array.from({ length: connections }, (_, i) => {
    const o = made[i % made.length]!
    return { tenantId: o.tenantId, session: { ...o.session, 'content-type': 'application/json' } }
  })
}

/** PAT creation by a tenant owner's session, a fresh name each request. */
function patCreation(h: Harness, api: BenchContext, name: string, spread: Spread): Measure {
  let sessions: Record<string, string>[] = []
  let n = 0
  return {
    name: `${name}, ${spread}`,
    async setup() {
      sessions = (await owners(api, h.settings.connections, spread)).map((o) => o.session)
    },
    run: closedLoop(h, h.settings.connections, 201, (worker) =>
      fetch(`${api.url}/v1/api-keys`, {
        method: 'POST',
        headers: sessions[worker]!,
        body: JSON.stringify({ name: `bench ${worker}-${++n}`, scopes: ['tenant:read'] }),
      }),
    ),
  }
}

const FLIP = { viewer: 'researcher', researcher: 'viewer' } as const

/** Role changes by a tenant owner's session: each loop owns one member and flips it between viewer and researcher,
 *  from the role the last answer showed, so no request repeats the current role (a no-op nothing would record). */
function roleChange(h: Harness, api: BenchContext, name: string, spread: Spread): Measure {
  const connections = h.settings.connections
  let loops: { session: Record<string, string>; member: { id: string; role: keyof typeof FLIP } }[] = []
  return {
    name: `${name}, ${spread}`,
    async setup() {
      const os = await owners(api, connections, spread)
      const tag = unique()
      const members = await withDb(
        api.databaseUrl,
        (sql) => sql<{ id: string; role: 'viewer'; tenant_id: string }[]>`
        with u as (
          insert into users (email, display_name) select 'flip-' || ${tag} || '-' || i || '@example.test', 'Member ' || i
            from generate_series(1, ${connections}) i returning id, email),
        n as (select id, row_number() over (order by email) as i from u)
        insert into memberships (tenant_id, user_id, role)
          select (${os.map((o) => o.tenantId)}::uuid[])[n.i], n.id, 'viewer' from n returning id, role, tenant_id`,
      )
      // Each loop takes a member of its own tenant (RETURNING promises no order).
      loops = os.map((o) => {
        const member = members.splice(
          members.findIndex((m) => m.tenant_id === o.tenantId),
          1,
        )[0]!
        return { session: o.session, member: { id: member.id, role: member.role } }
      })
    },
    run: closedLoop(h, connections, 200, async (worker) => {
      const { session, member } = loops[worker]!
      const res = await fetch(`${api.url}/v1/tenants/current/memberships/${member.id}`, {
        method: 'PATCH',
        headers: session,
        body: JSON.stringify({ role: FLIP[member.role] }),
      })
      if (res.status !== 200) return res
      member.role = ((await res.clone().json()) as { data: { role: keyof typeof FLIP } }).data.role
      return res
    }),
  }
}

export interface Seeded {
  tenantId: string
  tenantEntries: number
  start: Date
  end: Date
}

/** `total` entries straight into audit_log: the tenant gets every tenth, nine other tenants the rest, spread evenly
 *  over the 400 days before now and written in time order, like a live table. Chains are synthetic but consistent
 *  (seq counts up per chain, a constant 32-byte hash, the chain heads set to match); the action mix puts one entry
 *  in eight under api_key.; the usual columns are filled. Two sessions insert chunks side by side. */
async function seedAuditLog(databaseUrl: string, tenantId: string, total: number): Promise<Seeded> {
  const tenants = [tenantId, ...Array.from({ length: TENANTS - 1 }, () => crypto.randomUUID())]
  const end = new Date(Date.now() - 60_000)
  const start = new Date(end.getTime() - SPAN_DAYS * DAY_MS)
  const usPerRow = (SPAN_DAYS * DAY_MS * 1000) / total
  const hash = Buffer.alloc(32, 0xab)
  const actions: AuditAction[] = [
    'api_key.created',
    'api_key.revoked',
    'membership.updated',
    'invitation.created',
    'invitation.accepted',
    'webhook_endpoint.updated',
    'model_version.created',
    'model_version.upload_urls_issued',
    'model_version.validation_started',
    'training_job.created',
    'training_job.completed',
    'edge_package.created',
    'edge_package.run_reported',
    'embodiment_profile.updated',
    'storage.reconciliation_started',
    'domain.verified',
  ]
  const targets = actions.map((a) => auditCatalogue[a].target)
  // The tenant's chain already holds what its creation through the API recorded (sealed first, so no sealer numbers
  // it while the seeding runs): the seeded entries follow it.
  const heads = await withDb(databaseUrl, async (sql) => {
    await sealAuditChains(sql, tenants)
    return sql<{ chain: string; seq: string }[]>`select chain, seq from audit_chain_heads where chain = any(${tenants})`
  })
  const offsets = tenants.map((id) => Number(heads.find((h) => h.chain === id)?.seq ?? 0))
  const CHUNK = 500_000
  const chunks = Array.from({ length: Math.ceil(total / CHUNK) }, (_, k) => [k * CHUNK, Math.min(total, (k + 1) * CHUNK) - 1] as const)
  const t0 = performance.now()
  let done = 0
  await Promise.all(
    [0, 1].map(() =>
      withDb(databaseUrl, async (sql) => {
        for (let c = chunks.shift(); c; c = chunks.shift()) {
          const [lo, hi] = c
          await sql.begin(async (tx) => {
            await tx`set local session_replication_role = replica` // no triggers while seeding
            await tx`
          insert into audit_log (id, chain, seq, hash, occurred_at, tenant_id, subject_user_id, actor_type, actor_id, actor_label,
                                 credential_id, action, target_type, target_id, outcome, reason, ip, user_agent, request_id, changes, details)
          select ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, t.id::text, t.seq0 + i / ${TENANTS} + 1, ${hash},
                 ${start}::timestamptz + (i * ${usPerRow}::float8) * interval '1 microsecond', t.id,
                 case when a.k <= 2 then u.id end, case when r % 5 = 0 then 'api_key' else 'user' end, u.id::text,
                 'member-' || (r % 50) || '@example.test', case when r % 5 = 0 then ('00000000-0000-4000-9000-' || lpad(to_hex(r % 50), 12, '0'))::uuid end,
                 a.action, a.target, ('00000000-0000-4000-a000-' || lpad(to_hex(r % 1000000), 12, '0')), o.outcome,
                 case when o.outcome = 'failure' then 'txt_record_mismatch' end, '203.0.113.' || (r % 250), 'rcp-cli/1.4 (bench)',
                 'req_' || to_hex(i),
                 case when a.action = 'membership.updated' then '{"role": {"before": "viewer", "after": "researcher"}}'::jsonb end,
                 case when a.action = 'api_key.created' then '{"name": "ci", "scopes": ["model:read"]}'::jsonb end
            from generate_series(${lo}::bigint, ${hi}::bigint) i
            cross join lateral (select abs(hashint8(i))::bigint as r) h
            cross join lateral (select (${tenants}::uuid[])[1 + i % ${TENANTS}] as id, (${offsets}::bigint[])[1 + i % ${TENANTS}] as seq0) t
            cross join lateral (select ('00000000-0000-4000-8000-' || lpad(to_hex(i % ${TENANTS} * 1000 + r % 50), 12, '0'))::uuid as id) u
            cross join lateral (select 1 + r % ${actions.length} as k) k
            cross join lateral (select k.k, (${actions}::text[])[k.k] as action, (${targets}::text[])[k.k] as target) a
            cross join lateral (select case when a.action = 'domain.verified' and r % 7 = 0 then 'failure' else 'success' end as outcome) o`
          })
          done += hi - lo + 1
          say(`seeded ${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} audit entries (${((performance.now() - t0) / 1000).toFixed(0)} s)`)
        }
      }),
    ),
  )
  await withDb(databaseUrl, async (sql) => {
    const moved = tenants.map((id, k) => ({ chain: id, seq: offsets[k]! + Math.floor((total - 1 - k) / TENANTS) + 1 }))
    await sql`
      insert into audit_chain_heads (chain, seq, hash) select chain, seq, ${hash} from jsonb_to_recordset(${sql.json(moved)}) as h(chain text, seq bigint)
      on conflict (chain) do update set seq = excluded.seq, hash = excluded.hash`
    await sql`vacuum analyze audit_log`
  })
  say(`seeded and analysed in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  return { tenantId, tenantEntries: Math.floor((total - 1) / TENANTS) + 1, start, end }
}

/** The window holding about the newest `entries` of the seeded tenant (its entries are spread evenly in time). */
export function exportWindow(s: Seeded, entries: number): { from: Date; to: Date; entries: number } {
  const n = Math.min(entries, s.tenantEntries)
  return { from: new Date(s.end.getTime() - Math.ceil((n / s.tenantEntries) * (s.end.getTime() - s.start.getTime()))), to: s.end, entries: n }
}

/** Export of one window of the tenant's trail, run to completion in this process: it resolves with the number of
 *  entries written to the export object. */
export type ExportOnce = (window: { tenantId: string; from: Date; to: Date }) => Promise<number>

/** Row 4, for when the export activity exists (activities/audit-export.ts): two rows, the export of the seeded
 *  tenant's newest 100,000 entries and of its newest 1,000,000 (all of them by default), each in entries/s with a
 *  floor of 50,000/s. Memory: the peak RSS of this process above its RSS just before (after a full GC), sampled every
 *  10 ms while `exportOnce` runs, so the worker's code must run in this process (the activity called directly with
 *  its deps, or a worker started here as bench/webhooks.ts does). The 1M row notes both peaks and warns when they
 *  differ by 50 MB or more (the target: flat memory). A window's actual count must match what `exportOnce` reports. */
export function exportRows(seeded: Seeded, exportOnce: ExportOnce): Measure[] {
  const peaks = new Map<number, number>()
  const row = (entries: number): Measure => {
    const w = exportWindow(seeded, entries)
    return {
      name: `audit-log export, newest ${w.entries.toLocaleString('en-US')} entries of the tenant`,
      minRate: 50_000,
      async run() {
        Bun.gc(true)
        const before = process.memoryUsage.rss()
        let peak = before
        const sampler = setInterval(() => {
          peak = Math.max(peak, process.memoryUsage.rss())
        }, 10)
        const t0 = performance.now()
        try {
          const written = await exportOnce({ tenantId: seeded.tenantId, from: w.from, to: w.to })
          const seconds = (performance.now() - t0) / 1000
          peak = Math.max(peak, process.memoryUsage.rss())
          peaks.set(w.entries, Math.max(peaks.get(w.entries) ?? 0, peak - before))
          const small = peaks.get(Math.min(...peaks.keys()))
          const growthMb = (peak - before) / 2 ** 20
          const flat = peaks.size > 1 && small !== undefined ? (peak - before - small) / 2 ** 20 : undefined
          return {
            rate: written / seconds,
            note:
              `${written.toLocaleString('en-US')} entries in ${seconds.toFixed(1)} s; peak RSS +${growthMb.toFixed(0)} MB` +
              (flat === undefined ? '' : `, ${flat.toFixed(0)} MB above the smallest export's`),
            warning: flat !== undefined && flat >= 50 ? `RSS grew ${flat.toFixed(0)} MB more than the smallest export's (target: under 50)` : undefined,
          }
        } finally {
          clearInterval(sampler)
        }
      },
    }
  }
  return [row(100_000), row(1_000_000)]
}

/** The worker's export activity, run here (so this process's RSS is the worker's) with the little of an activity
 *  Context it uses, writing into `bucket` of the MinIO at `s3Endpoint`. */
async function exportInProcess(h: Harness, databaseUrl: string): Promise<ExportOnce> {
  const dir = join(CACHE_DIR, 'bench-minio-audit')
  const minio = await startMinio({ dataDir: dir, port: await freePort(), consolePort: await freePort(), logFile: join(dir, 'minio.log') })
  h.own(minio)
  const bucket = 'bench-audit-export'
  const s3 = s3For({ id: 'local', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })
  if (!(await s3.bucketExists(bucket))) await s3.makeBucket(bucket)
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, S3_ENDPOINT: minio.endpoint, SECRET_KEY: newSecretKey(), LOG_LEVEL: 'warn' })
  const sql = createDb(databaseUrl, { max: 2 })
  const deps = { ...composeServices(config, sql, createLogger('warn', { service: 'bench-audit-export' })), activityMetrics: createWorkerMetrics(sql) }
  h.own({
    stop: async () => {
      await deps.temporal.close()
      await sql.end({ timeout: 5 })
    },
  })
  const { writeAuditExport } = createActivities(deps)
  return async ({ tenantId, from, to }) => {
    const head = (await chainHead(sql, tenantId))!
    const exportId = crypto.randomUUID()
    const context = {
      info: { attempt: 1, workflowExecution: { workflowId: `bench/audit-export/${exportId}`, runId: 'bench' } },
      heartbeat() {},
      cancellationSignal: new AbortController().signal,
    }
    const file = await asyncLocalStorage.run(context as never, () =>
      writeAuditExport({
        tenantId,
        exportId,
        from: from.toISOString(),
        to: to.toISOString(),
        regionId: 'local',
        bucket,
        objectKey: `bench/${exportId}.ndjson.gz`,
        chainHead: { seq: head.seq, hash: head.hash?.toString('hex') ?? null },
        batchSize: AUDIT_EXPORT_BATCH,
      }),
    )
    return file.entries
  }
}

const PARTS = ['sign-in', 'writes', 'page', 'export'] as const
const options: ParseArgsConfig['options'] = { 'audit-rows': { type: 'string' }, only: { type: 'string' } }

await benchmark('audit', options, async (h) => {
  if (!process.env.BENCH_DURATION && !h.flags.duration && !h.flags.quick) h.settings.duration = 5
  const total = Number(h.flags['audit-rows'] ?? (h.flags.quick ? 1_000_000 : 10_000_000))
  if (!Number.isInteger(total) || total < TENANTS) throw new Error('--audit-rows must be an integer of at least 10')
  const only = String(h.flags.only ?? PARTS.join(',')).split(',')
  const unknown = only.filter((p) => !(PARTS as readonly string[]).includes(p))
  if (unknown.length > 0) throw new Error(`--only takes a comma-separated list of ${PARTS.join(', ')}; not ${unknown.join(', ')}`)
  const part = (p: (typeof PARTS)[number]) => only.includes(p)
  const audited = await h.postgres()
  const bare = await h.postgres()
  await removeAuditInsert(bare.url)
  const env = { CREDENTIAL_CACHE_FENCE_MS: '0' }
  const withAudit = await h.api(audited.url, { env })
  const withoutAudit = await h.api(bare.url, { env })

  // Row 3's tenant is a real one, made through the API, whose tenant:manage PAT reads the page. Making one on each
  // build also proves the switch: the PAT's creation is recorded on one and leaves no entry on the other.
  const reader = await patIn(withAudit, ['tenant:read', 'tenant:manage'])
  await patIn(withoutAudit, ['tenant:read'])
  // Sealed or still waiting to be (the sealer runs every AUDIT_SEAL_INTERVAL_MS).
  const entries = (url: string) =>
    withDb(
      url,
      async (sql) =>
        (
          await sql<{ n: number }[]>`
    select (select count(*) from audit_log)::int + (select count(*) from audit_inbox)::int as n`
        )[0]!.n,
    )
  const [recorded, leaked] = [await entries(audited.url), await entries(bare.url)]
  if (recorded === 0 || leaked !== 0) throw new Error(`expected entries on the audited build only; found ${recorded} and ${leaked}`)

  const mil = (n: number) => `${(n / 1e6).toLocaleString('en-US')}M`
  const PAT = 'POST /v1/api-keys (session + CSRF)'
  const ROLE = 'PATCH /v1/tenants/current/memberships/:id (role)'
  const BARE = ', audit insert removed'
  const baselines: Measure[] = []
  const rows: Measure[] = []
  if (part('sign-in')) {
    const signInBare = h.http(withoutAudit, { ...signIn, name: `${signIn.name}${BARE}` })
    baselines.push(argon2Baseline(h), signInBare)
    rows.push(h.http(withAudit, { ...signIn, target: 0.95, targetOf: ARGON2 }))
    rows.push(h.http(withAudit, { ...signIn, name: `${signIn.name}, beside the build${BARE}`, target: 0.95, targetOf: signInBare.name }))
  }
  if (part('writes')) {
    for (const spread of ['one tenant', 'a tenant each'] as const) {
      const patBare = patCreation(h, withoutAudit, `${PAT}${BARE}`, spread)
      const roleBare = roleChange(h, withoutAudit, `${ROLE}${BARE}`, spread)
      baselines.push(patBare, roleBare)
      rows.push({ ...patCreation(h, withAudit, PAT, spread), target: 0.9, targetOf: patBare.name })
      rows.push({ ...roleChange(h, withAudit, ROLE, spread), target: 0.9, targetOf: roleBare.name })
    }
  }
  if (part('page') || part('export')) {
    const seeded = await seedAuditLog(withAudit.databaseUrl, reader.tenantId, total)
    if (part('page')) {
      const day = new Date(Math.floor((seeded.end.getTime() - (SPAN_DAYS / 2) * DAY_MS) / DAY_MS) * DAY_MS)
      const pagePath = `/v1/tenants/current/audit-log?from=${day.toISOString()}&to=${new Date(day.getTime() + DAY_MS).toISOString()}&action=api_key.&pageSize=50`
      const page = must(await withAudit.call('GET', pagePath, { headers: reader.headers }), 200, 'audit-log page')
      say(`the page of ${day.toISOString().slice(0, 10)} holds ${page.json.data.length} entries${page.json.nextPageToken ? ' and has a next page' : ''}`)
      if (page.json.data.length === 0) throw new Error('the seeded day has no api_key. entries')
      rows.push(
        h.http(withAudit, {
          name: `GET /v1/tenants/current/audit-log, one day, action=api_key., 50 a page (tenant ${mil(seeded.tenantEntries)} of ${mil(total)}), 1 conn`,
          method: 'GET',
          path: pagePath,
          connections: 1,
          setup: async () => reader.headers,
          maxP50Ms: 20,
        }),
      )
    }
    if (part('export')) rows.push(...exportRows(seeded, await exportInProcess(h, audited.url)))
  }
  return { baselines, rows, rounds: 4, paired: true }
})
