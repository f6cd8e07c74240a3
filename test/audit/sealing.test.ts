// Sealing after the commit (migrations/0024): the change's transaction writes its entry unsealed, and the API's
// sealer or the chain's next reader numbers and hashes it. What must hold: the sealer does it alone, time never goes
// back along a chain, and sealers and readers at work together lose, repeat and misorder nothing.
import { describe, expect, test } from 'bun:test'
import { sealAuditBatch, sealAuditChains, sealSubjectAudit } from '../../api/audit/queries'
import { AuditSealer } from '../../api/audit/sealer'
import { recordAudit } from '../../api/audit/service'
import { activityContext } from '../../api/identity/context'
import { createDb, type Db } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { freePort } from '../../scripts/platform'
import { useApi } from '../support/api'
import { hourAgo, inAnHour, sealAudit } from '../support/audit'
import { patFor, tenantOwner } from '../support/fixtures'
import { holdRows } from '../support/row-hold'

const api = useApi({ AUDIT_SEAL_INTERVAL_MS: '100' })

/** Every sealed entry of one chain, in sequence order. */
const chainOf = (chain: string) => api.sql<{ id: string; seq: number; occurred_at: Date; actor_id: string | null }[]>`
  select id, seq, occurred_at, actor_id from audit_log where chain = ${chain} order by seq`

/** The backends whose seal (audit_seal_chains) waits for a lock `holderPid` holds, as Postgres itself reports it. */
const sealsBlockedBy = async (holderPid: number) =>
  (
    await api.sql<{ pid: number }[]>`
    select pid from pg_stat_activity where ${holderPid} = any(pg_blocking_pids(pid)) and query like '%audit_seal_chains%'`
  ).map((r) => r.pid)

describe('sealing after the commit', () => {
  test('the sealer numbers, hashes and streams committed entries with no reader asking', async () => {
    const owner = await tenantOwner(api.url)
    await api.sql`
      insert into webhook_endpoints (tenant_id, url, events, secret_sealed) values (${owner.tenantId}, 'https://siem.example.test/', '{audit.entry}', '\\x00')`
    const { id } = await patFor(owner.client, ['model:read'])
    const deadline = Date.now() + 10_000
    let sealed: readonly unknown[] = []
    while (Date.now() < deadline) {
      sealed = await api.sql`select 1 from audit_log where chain = ${owner.tenantId} and target_id = ${id}`
      if (sealed.length > 0) break
      await Bun.sleep(50)
    }
    expect(sealed).toHaveLength(1)
    expect(await api.sql`select 1 from audit_inbox where chain = ${owner.tenantId}`).toHaveLength(0)
    const events = await api.sql`select 1 from events where tenant_id = ${owner.tenantId} and type = 'audit.entry' and data->'target'->>'id' = ${id}`
    expect(events).toHaveLength(1)
  })

  test('an entry whose transaction commits after a newer one was sealed follows it, in time too', async () => {
    const owner = await tenantOwner(api.url)
    const ctx = (name: string) => activityContext(`test/${name}`)
    let releaseEarly!: () => void
    const held = new Promise<void>((resolve) => {
      releaseEarly = resolve
    })
    let written!: () => void
    const early = new Promise<void>((resolve) => {
      written = resolve
    })
    const slow = api.sql.begin(async (tx) => {
      await recordAudit(tx, ctx('early'), { action: 'storage.provisioned', tenantId: owner.tenantId })
      written()
      await held
    })
    await early
    await Bun.sleep(20)
    await recordAudit(api.sql, ctx('late'), { action: 'storage.provisioned', tenantId: owner.tenantId })
    await sealAuditChains(api.sql, [owner.tenantId])
    releaseEarly()
    await slow
    await sealAuditChains(api.sql, [owner.tenantId])

    const rows = (await chainOf(owner.tenantId)).filter((r) => r.actor_id?.startsWith('test/'))
    expect(rows.map((r) => r.actor_id)).toEqual(['test/late', 'test/early'])
    expect(rows[1]!.seq).toBe(rows[0]!.seq + 1)
    expect(rows[1]!.occurred_at.getTime()).toBeGreaterThanOrEqual(rows[0]!.occurred_at.getTime())
    const check = await owner.client.post('/tenants/current/audit-log/verifications', { from: hourAgo(), to: inAnHour() })
    expect(check.json.data).toMatchObject({ intact: true, firstBrokenSeq: null })
  })

  test('sealers and readers at work together on one chain lose, repeat and misorder nothing', async () => {
    const owner = await tenantOwner(api.url)
    // Two more sealers, as two more replicas would run, each on its own connection.
    const others = [createDb(api.deps.config.DATABASE_URL, { max: 1 }), createDb(api.deps.config.DATABASE_URL, { max: 1 })]
    let writing = true
    try {
      const sealers = others.map(async (db) => {
        while (writing) {
          await sealAuditBatch(db, 7)
          await Bun.sleep(1)
        }
      })
      const readers = (async () => {
        while (writing)
          await owner.client.get(`/tenants/current/audit-log?from=${encodeURIComponent(hourAgo())}&to=${encodeURIComponent(inAnHour())}&pageSize=1`)
      })()
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 15; i++) {
          await api.sql.begin((tx) => recordAudit(tx, activityContext(`test/w${w}-${i}`), { action: 'storage.provisioned', tenantId: owner.tenantId }))
        }
      })
      await Promise.all(writers)
      writing = false
      await Promise.all([...sealers, readers])
    } finally {
      await Promise.all(others.map((db) => db.end()))
    }
    await sealAudit(api.sql)

    const rows = await chainOf(owner.tenantId)
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1))
    const written = rows.filter((r) => r.actor_id?.startsWith('test/w')).map((r) => r.actor_id)
    expect(new Set(written).size).toBe(8 * 15)
    expect(written).toHaveLength(8 * 15)
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.occurred_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.occurred_at.getTime())
    // Each writer's own entries in the order it made them.
    for (let w = 0; w < 8; w++) {
      const mine = written.filter((a) => a!.startsWith(`test/w${w}-`))
      expect(mine).toEqual(Array.from({ length: 15 }, (_, i) => `test/w${w}-${i}`))
    }
    const check = await owner.client.post('/tenants/current/audit-log/verifications', { from: hourAgo(), to: inAnHour() })
    expect(check.json.data).toMatchObject({ intact: true, firstBrokenSeq: null, verified: rows.length })
  })

  test("one tenant's chain held by a sealer holds up no other tenant's changes, seals or reads, nor its own changes", async () => {
    const [a, b] = [await tenantOwner(api.url), await tenantOwner(api.url)]
    await sealAudit(api.sql)
    const log = (id: string) => `/tenants/current/audit-log?from=${encodeURIComponent(hourAgo())}&to=${encodeURIComponent(inAnHour())}&targetId=${id}`
    // A sealer at work on a's chain holds its head row locked (audit_seal_locked) for as long as its transaction lasts.
    const { pid: holderPid, release } = await holdRows(
      api.deps.config.DATABASE_URL,
      (tx) => tx`select 1 from audit_chain_heads where chain = ${a.tenantId} for update`,
    )
    try {
      // a's change commits: a change never waits for its chain. Its entry waits, unsealed, behind the held head.
      const aKey = await patFor(a.client, ['model:read'])
      // b changes something and reads it back, which seals b's chain first: neither waits for a's.
      const bKey = await patFor(b.client, ['model:read'])
      const bList = await b.client.get(log(bKey.id))
      expect({ status: bList.status, entries: bList.json.data.length }).toEqual({ status: 200, entries: 1 })
      // Only a's reader waits, for the sealer at work on a's chain to finish.
      let aAnswered = false
      const aList = a.client.get(log(aKey.id)).finally(() => {
        aAnswered = true
      })
      // Postgres itself says when the reader is waiting: its seal of a's chain is blocked by the held head. (The
      // background sealer skips a locked head, so the blocked statement is the reader's.)
      while (!aAnswered && (await sealsBlockedBy(holderPid)).length === 0) await Bun.sleep(20)
      expect(aAnswered).toBe(false)
      await release()
      const answered = await aList
      expect({ status: answered.status, entries: answered.json.data.length }).toEqual({ status: 200, entries: 1 })
    } finally {
      await release()
    }
  })

  test("a reader of many chains that waits for one held chain holds no other chain's head meanwhile", async () => {
    // One account's entries lie in several tenants' chains; its reader seals them all. Were they locked together, it
    // would hold the first chain's head while it waits for the held one, and that first tenant's own readers (and any
    // test helper that seals every chain) would wait behind a chain that is not theirs.
    const [a, b] = [await tenantOwner(api.url), await tenantOwner(api.url)]
    await sealAuditChains(api.sql, [a.tenantId, b.tenantId])
    const [first, last] = (await api.sql<{ chain: string }[]>`select chain from unnest(${[a.tenantId, b.tenantId]}::text[]) chain order by chain`).map(
      (r) => r.chain,
    )
    const entry = (chain: string) =>
      recordAudit(api.sql, activityContext('test/many-chains'), {
        action: 'api_key.created',
        tenantId: chain,
        subjectUserId: a.userId,
        target: { type: 'api_key', id: crypto.randomUUID() },
      })
    const hold = (chain: string) => holdRows(api.deps.config.DATABASE_URL, (tx) => tx`select 1 from audit_chain_heads where chain = ${chain} for update`)
    // Both heads held while the account gets an entry in each chain, so no background sealer takes them first.
    // The two readers on connections of their own, so Postgres can say which of them waits for which: other files'
    // readers of these chains may queue behind the same locks at the same time.
    const [subjectDb, firstDb] = [createDb(api.deps.config.DATABASE_URL, { max: 1 }), createDb(api.deps.config.DATABASE_URL, { max: 1 })]
    const pidOf = async (db: Db) => (await db<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid
    const [subjectPid, firstPid] = [await pidOf(subjectDb), await pidOf(firstDb)]
    const waits = async (waiter: number, holder: number) =>
      (await api.sql<{ b: boolean }[]>`select ${holder}::int = any(pg_blocking_pids(${waiter}::int)) as b`)[0]!.b
    const [onFirst, onLast] = [await hold(first!), await hold(last!)]
    try {
      await entry(first!)
      await entry(last!)
      let subjectAnswered = false
      const subjectRead = sealSubjectAudit(subjectDb, a.userId).finally(() => {
        subjectAnswered = true
      })
      while (!(await waits(subjectPid, onFirst.pid))) await Bun.sleep(20)
      await onFirst.release()
      // The reader has the first chain now and goes on to wait for the last one.
      while (!subjectAnswered && !(await waits(subjectPid, onLast.pid))) await Bun.sleep(20)
      expect(subjectAnswered).toBe(false)
      // The first tenant's own reader, with a new entry to seal, is answered while the last chain is still held.
      await entry(first!)
      let firstAnswered = false
      const firstRead = sealAuditChains(firstDb, [first!]).finally(() => {
        firstAnswered = true
      })
      while (!firstAnswered && !(await waits(firstPid, subjectPid))) await Bun.sleep(20)
      expect(firstAnswered).toBe(true)
      await firstRead
      expect(await api.sql`select 1 from audit_inbox where chain = ${first!}`).toHaveLength(0)
      await onLast.release()
      await subjectRead
      expect(await api.sql`select 1 from audit_inbox where subject_user_id = ${a.userId}`).toHaveLength(0)
    } finally {
      await onFirst.release()
      await onLast.release()
      await Promise.all([subjectDb.end(), firstDb.end()])
    }
  })

  test('a sealer that cannot reach the database says so once, and again when it works', async () => {
    const lines: { level: string; msg: string }[] = []
    const log = createLogger('info', {}, (line) => lines.push(JSON.parse(line)))
    const away = createDb(`postgres://nobody:nothing@127.0.0.1:${await freePort()}/none`, { max: 1, connectTimeoutSeconds: 1 })
    let down = true
    // The sealer's database, away until `down` turns false (a tagged template forwarded to one pool or the other).
    const flaky = ((strings: TemplateStringsArray, ...values: unknown[]) => (down ? away : api.sql)(strings, ...(values as never[]))) as unknown as Db
    try {
      const sealer = new AuditSealer(flaky, log, 60_000, 10)
      for (let i = 0; i < 3; i++) await sealer.step()
      expect(lines.map((l) => [l.level, l.msg])).toEqual([['warn', 'audit sealing failed; every interval retries']])
      down = false
      await sealer.step()
      await sealer.step()
      expect(lines.map((l) => l.msg)).toEqual(['audit sealing failed; every interval retries', 'audit sealing works again'])
    } finally {
      await away.end({ timeout: 1 })
    }
  })
})
