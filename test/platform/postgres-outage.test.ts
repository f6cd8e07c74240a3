// The fault drill of Postgres: a Postgres of this file's own is stopped for a few seconds and started again while
// writes (PAT creation) and reads (the PAT list) flow through the API, run as deployed (api/main.ts in its own
// process). While it is down every answer is 503 SERVICE_UNAVAILABLE problem+json with Retry-After, never a 500
// nor a request held past the connect timeout; afterwards the API recovers by itself (the same process), and every
// write it acknowledged is in the database, whole.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDb, type Sql } from '../../api/platform/db'
import { migrate } from '../../api/platform/migrate'
import { freePort, REPO_ROOT, spawnChild, startPostgres, tail, waitUntil, type Child, type PostgresServer } from '../../scripts/platform'
import { PASSWORD, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { sealAudit } from '../support/audit'

const CONNECT_TIMEOUT_SECONDS = 2
// How long the drill keeps Postgres away, at most, for the requests in flight to answer before it starts it again: a
// request held until the database returns is still in flight then, however fast or slow the machine. Only a hang
// meets it; a client's own give-up comes later still, so the hang is reported as such.
const DRAIN_CAP_MS = 30_000
const CLIENT_GIVES_UP_MS = DRAIN_CAP_MS + 10_000

let pg: PostgresServer
let api: Child
let sql: Sql
let base = ''
const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'pg-outage-'))
const pgPort = await freePort()
const startOwnPostgres = () =>
  startPostgres({
    dataDir: join(dir, 'data'),
    port: pgPort,
    database: 'rcp_outage',
    logFile: join(dir, 'postgres.log'),
    ephemeral: true,
    own: true,
  })

beforeAll(async () => {
  pg = await startOwnPostgres()
  sql = createDb(pg.url, { max: 2 })
  await migrate(sql)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  api = spawnChild('outage-api', {
    cmd: [process.execPath, 'api/main.ts'],
    cwd: REPO_ROOT,
    logFile: join(dir, 'api.log'),
    env: {
      ...process.env,
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      DATABASE_URL: pg.url,
      DATABASE_CONNECT_TIMEOUT_SECONDS: String(CONNECT_TIMEOUT_SECONDS),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PRINCIPAL_PER_MINUTE: '0',
      RATE_LIMIT_TENANT_PER_MINUTE: '0',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
    },
  })
  await waitUntil(api, 'the API', async () => (await fetch(`${base}/healthz`)).ok)
}, 60_000)

afterAll(async () => {
  await api?.stop()
  await sql?.end({ timeout: 1 })
  await pg?.stop()
})

/** A tenant owner's cookie session, by plain requests (the suite's client would collect its secrets for a scan of
 *  the runner's database, which this file's Postgres is not). */
async function ownerSession() {
  const reg = await fetch(`${base}/v1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: uniqueEmail('drill'), password: PASSWORD }),
  })
  expect(reg.status).toBe(201)
  const cookie = reg.headers.get('set-cookie')!.split(';')[0]!
  const csrf = ((await reg.json()) as { data: { session: { csrfToken: string } } }).data.session.csrfToken
  const headers = { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' }
  const tenant = await fetch(`${base}/v1/tenants`, { method: 'POST', headers, body: JSON.stringify({ name: 'Drill', slug: uniqueSlug('drill') }) })
  expect(tenant.status).toBe(201)
  const body = (await tenant.json()) as { data: { tenant: { id: string } } }
  return { headers: { ...headers, cookie: tenant.headers.get('set-cookie')?.split(';')[0] ?? cookie }, tenantId: body.data.tenant.id }
}

type Outcome = {
  kind: 'write' | 'read'
  name?: string
  status: number
  startedAt: number
  endedAt: number
  ms: number
  during: boolean
  problem?: any
  retryAfter?: string | null
  contentType?: string | null
}

describe('Postgres stopped and started again while requests flow', () => {
  test('503 with Retry-After while down, never a 500 or a hang; recovers alone; every acknowledged write is there, whole', async () => {
    const owner = await ownerSession()
    const headers = owner.headers
    let down = false
    let stop = false
    let holding = false // no new request starts: the drill waits for those in flight to answer
    let inFlight = 0
    const outcomes: Outcome[] = []
    let n = 0

    async function one(kind: 'write' | 'read'): Promise<number> {
      const name = kind === 'write' ? `drill-${++n}` : undefined
      const during = down
      const t0 = performance.now()
      inFlight++
      try {
        const res = await fetch(`${base}/v1/api-keys`, {
          method: kind === 'write' ? 'POST' : 'GET',
          headers,
          body: kind === 'write' ? JSON.stringify({ name, scopes: ['tenant:read'] }) : undefined,
          signal: AbortSignal.timeout(CLIENT_GIVES_UP_MS),
        })
        const text = await res.text()
        const t1 = performance.now()
        outcomes.push({
          kind,
          name,
          status: res.status,
          startedAt: t0,
          endedAt: t1,
          ms: t1 - t0,
          during: during || down,
          problem: res.status >= 400 ? JSON.parse(text) : undefined,
          retryAfter: res.headers.get('retry-after'),
          contentType: res.headers.get('content-type'),
        })
        return res.status
      } catch (err) {
        const t1 = performance.now()
        outcomes.push({ kind, name, status: 0, startedAt: t0, endedAt: t1, ms: t1 - t0, during: during || down, problem: String(err) })
        return 0
      } finally {
        inFlight--
      }
    }
    // A short pause after a 503 (a client would honour Retry-After; this one keeps asking, to see every answer).
    const flow = async (kind: 'write' | 'read') => {
      while (!stop) {
        if (holding) {
          await Bun.sleep(20)
          continue
        }
        if ((await one(kind)) === 503) await Bun.sleep(20)
      }
    }
    const flowing = Promise.all([flow('write'), flow('write'), flow('read'), flow('read')])

    await Bun.sleep(1000)
    const before = outcomes.length
    down = true
    await pg.stop()
    await Bun.sleep(4000)
    // Nothing is held past the connect timeout: with the database still away, every request in flight answers.
    // Ordered against the restart, not timed: a request held until the database returns would end after it.
    holding = true
    const drainStarted = performance.now()
    while (inFlight > 0 && performance.now() - drainStarted < DRAIN_CAP_MS) await Bun.sleep(20)
    const restartAt = performance.now()
    pg = await startOwnPostgres()
    down = false
    holding = false
    const upAt = performance.now()
    // Recovery by itself: the flow goes on until both kinds have succeeded again, with nobody's help.
    let recoveredMs = -1
    while (performance.now() - upAt < 30_000) {
      const since = outcomes.filter((o) => o.startedAt > upAt).slice(-8)
      if (since.length === 8 && since.every((o) => o.status >= 200 && o.status < 300)) {
        recoveredMs = performance.now() - upAt
        break
      }
      await Bun.sleep(100)
    }
    await Bun.sleep(1000)
    stop = true
    await flowing

    const during = outcomes.filter((o) => o.during)
    const failures = outcomes.filter((o) => o.status < 200 || o.status >= 300)
    const acknowledged = outcomes.filter((o) => o.kind === 'write' && o.status === 201).map((o) => o.name!)
    const p50 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? -1)
    console.error(
      `[drill] 503 median ${p50(failures.map((o) => o.ms))} ms; requests ${outcomes.length} (before the stop ${before}), during the outage ${during.length}, 503 ${outcomes.filter((o) => o.status === 503).length}, ` +
        `other failures ${failures.filter((o) => o.status !== 503).length}, longest ${Math.round(Math.max(...outcomes.map((o) => o.ms)))} ms, ` +
        `acknowledged writes ${acknowledged.length}, recovered ${Math.round(recoveredMs)} ms after the restart`,
    )

    for (const o of failures.filter((f) => f.status !== 503))
      console.error(`[drill] not a 503: ${JSON.stringify({ ...o, startedAt: Math.round(o.startedAt - upAt) })}`)
    expect(before).toBeGreaterThan(4)
    expect(during.length).toBeGreaterThan(4)
    expect(recoveredMs).toBeGreaterThanOrEqual(0)
    // Every failure is the documented 503, problem+json with Retry-After, and nothing waited past the timeout.
    for (const o of failures) {
      expect({ status: o.status, code: o.problem?.code, type: o.contentType, retryAfter: o.retryAfter }).toEqual({
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        type: 'application/problem+json',
        retryAfter: expect.stringMatching(/^\d+$/),
      })
    }
    expect(failures.length).toBeGreaterThan(0)
    // Most are refused on arrival while the database is known away (the circuit), not queued behind a reconnecting
    // pool: only a request that reached the pool logs its failure.
    const reachedPool = readFileSync(api.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"msg":"database unavailable"')).length
    expect({ reachedPool, refused: failures.length, mostOnArrival: reachedPool * 4 < failures.length }).toEqual({
      reachedPool,
      refused: failures.length,
      mostOnArrival: true,
    })
    const heldPastRestart = outcomes.filter((o) => o.startedAt < restartAt && o.endedAt >= restartAt)
    expect({ inFlightAtRestart: heldPastRestart.map((o) => `${o.kind} ${o.status}`) }).toEqual({ inFlightAtRestart: [] })

    // Every acknowledged write is in the database, whole: its row and its audit entry, written in one transaction.
    expect({ apiRunning: api.running(), log: api.running() ? '' : tail(api.logFile, 20) }).toEqual({ apiRunning: true, log: '' })
    await sealAudit(sql)
    const rows = await sql<{ name: string; audited: boolean }[]>`
      select k.name, exists (select 1 from audit_log a where a.tenant_id = k.tenant_id and a.action = 'api_key.created' and a.target_id = k.id::text) as audited
        from api_keys k where k.tenant_id = ${owner.tenantId} and k.name like 'drill-%'`
    const stored = new Map(rows.map((r) => [r.name, r.audited]))
    expect(acknowledged.filter((name) => !stored.has(name))).toEqual([])
    expect(rows.filter((r) => !r.audited).map((r) => r.name)).toEqual([])
    // A write refused with 503 may still have committed (the answer lost after the commit), but never in part.
    const unacknowledgedStored = rows.filter((r) => !acknowledged.includes(r.name)).length
    console.error(`[drill] rows of unacknowledged writes: ${unacknowledgedStored}`)
  }, 120_000)
})

describe('the driver race that would end the process mid-outage', () => {
  // postgres 3.4.9 flushes a buffered write from a setImmediate after the connection closed (porsager/postgres
  // #1208): the TypeError below, thrown from a timer. The drill meets it now and then; this throws it for sure.
  const run = (thrown: string) =>
    Bun.spawnSync(
      [
        process.execPath,
        '-e',
        `
    import { surviveDriverClosedSocketWrites } from '${join(REPO_ROOT, 'api', 'platform', 'db.ts')}'
    import { createLogger } from '${join(REPO_ROOT, 'api', 'platform', 'log.ts')}'
    surviveDriverClosedSocketWrites(createLogger('warn'))
    setImmediate(() => { ${thrown} })
    setTimeout(() => { console.log('still running'); process.exit(0) }, 200)
  `,
      ],
      { cwd: REPO_ROOT },
    )

  test('the entry points survive that one error, logged, and still end on any other', () => {
    const race = run(
      `const e = new TypeError("null is not an object (evaluating 'socket.write')"); e.stack = e.message + '\\n    at nextWrite (${REPO_ROOT}/node_modules/postgres/src/connection.js:255:15)'; throw e`,
    )
    expect([race.exitCode, race.stdout.toString()]).toEqual([0, expect.stringContaining('still running')])
    expect(race.stdout.toString()).toContain('database driver wrote to a closed connection')
    const other = run(`throw new TypeError('something else')`)
    expect([other.exitCode, other.stdout.toString().includes('still running')]).toEqual([1, false])
  })
})
