import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ScheduleOverlapPolicy, WorkflowFailedError } from '@temporalio/client'
import { ActivityFailure, ApplicationFailure } from '@temporalio/common'
import { recordAudit } from '../../api/audit/service'
import { activityContext } from '../../api/identity/context'
import { loadConfig, type Config } from '../../api/platform/config'
import { createDb, type Sql } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { migrate } from '../../api/platform/migrate'
import { ensureSchedule } from '../../worker/ensure-schedule'
import { startWorker, type RunningWorker } from '../../worker/run'
import { housekeepingSchedule } from '../../worker/schedules'
import {
  ErrorType,
  housekeepingScheduleId,
  SYSTEM_TENANT,
  taskQueues,
  TENANT_ID,
  workflowIds,
  WorkflowType,
  type HousekeepingInput,
  type HousekeepingResult,
} from '../../workflows/contract'
import { connectTemporal, eventually, type TestTemporal } from '../support/temporal'
import { sealAudit } from '../support/audit'

// Each test waits on real workflow runs and on eventually consistent visibility (polled for up to 20 s).
setDefaultTimeout(30_000)

let t: TestTemporal
let sql: Sql
// A database and a worker (task-queue prefix) of this file's own: every other test leaves expired rows in the
// shared database, so only here does a run purge exactly what a test seeded, and its counts can be asserted.
const ownDb = `rcp_housekeeping_${crypto.randomUUID().slice(0, 8)}`
let own: { sql: Sql; config: Config; worker: RunningWorker }
beforeAll(async () => {
  t = await connectTemporal()
  sql = createDb(t.config.DATABASE_URL, { max: 2 })
  await sql`create database ${sql(ownDb)}`
  const url = new URL(t.config.DATABASE_URL)
  url.pathname = `/${ownDb}`
  // A year between scheduled runs (and a pause, below): only the test's trigger starts one.
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    DATABASE_URL: url.toString(),
    HOUSEKEEPING_INTERVAL_MINUTES: String(365 * 24 * 60),
    TEMPORAL_TASK_QUEUE_PREFIX: `housekeeping-${crypto.randomUUID().slice(0, 8)}`,
    WORKER_TASK_QUEUES: 'platform',
  })
  const ownSql = createDb(config.DATABASE_URL, { max: 4 })
  await migrate(ownSql)
  own = { sql: ownSql, config, worker: await startWorker(config, { sql: ownSql, schedules: false, log: createLogger('silent') }) }
}, 60_000)
afterAll(async () => {
  await t.client.schedule
    .getHandle(housekeepingScheduleId(own.config))
    .delete()
    .catch(() => {})
  await own?.worker.shutdown()
  await own?.sql.end({ timeout: 5 })
  await sql`drop database if exists ${sql(ownDb)} with (force)`
  await sql.end({ timeout: 5 })
  await t.close()
})

/** Rows on both sides of every expiry rule, unique to this call so reruns and parallel files never collide. */
async function seed(sql: Sql, expiredPerKind = 1) {
  const run = crypto.randomUUID()
  const [user] = await sql<{ id: string }[]>`insert into users (email) values (${`housekeeping-${run}@example.test`}) returning id`
  const session = (expiresAt: string, revokedAt: string | null) =>
    sql<{ id: string }[]>`
    insert into sessions (user_id, token_hash, expires_at, idle_timeout_seconds, revoked_at)
    values (${user!.id}, ${crypto.getRandomValues(new Uint8Array(32))}, now() + ${expiresAt}::interval, 3600, now() + ${revokedAt}::interval)
    returning id`.then((r) => r[0]!.id)
  const key = (name: string, expiresIn: string) => sql`
    insert into idempotency_keys (scope, key, request_hash, state, expires_at)
    values (${`housekeeping-test:${run}`}, ${name}, 'h', 'completed', now() + ${expiresIn}::interval)`

  // A shared request bucket untouched for a minute is full again: purged; one in use stays.
  const budget = (id: string, at: string) => sql`
    insert into rate_budgets (kind, id, tokens, at) values ('user', ${`${run}-${id}`}, 1, now() + ${at}::interval)`
  // Project memberships: one project each (a user is in a project once), expired ones purged, a live one kept.
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('hk members', ${`hk-${run}`}) returning id`
  const [membership] = await sql<
    { id: string }[]
  >`insert into memberships (tenant_id, user_id, role) values (${tenant!.id}, ${user!.id}, 'viewer') returning id`
  const projectMember = async (expiresIn: string) => {
    const [p] = await sql<
      { id: string }[]
    >`insert into projects (tenant_id, name, slug) values (${tenant!.id}, 'p', ${`p-${crypto.randomUUID()}`}) returning id`
    await sql`
      insert into project_members (tenant_id, project_id, membership_id, user_id, role, expires_at)
      values (${tenant!.id}, ${p!.id}, ${membership!.id}, ${user!.id}, 'reader', now() + ${expiresIn}::interval)`
    return p!.id
  }
  // Digests of destroyed credentials: purged once the credential would have expired by itself, kept until then.
  const retired = (expiresIn: string) =>
    sql<{ digest: Buffer }[]>`
    insert into retired_credentials (digest, reason, expires_at)
    values (${Buffer.from(crypto.getRandomValues(new Uint8Array(32)))}, 'account_erased', now() + ${expiresIn}::interval)
    returning digest`.then((r) => r[0]!.digest.toString('hex'))
  // Device authorizations: an unanswered one stays a day past its expiry, an answered one goes at its expiry.
  const grant = (name: string, status: string, expiresIn: string) => sql`
    insert into device_authorizations (device_code_hash, user_code_hash, client_name, scopes, expires_at, status, user_id, membership_id)
    values (${Buffer.from(crypto.getRandomValues(new Uint8Array(32)))}, ${Buffer.from(crypto.getRandomValues(new Uint8Array(32)))}, ${`${run}-${name}`},
            '{tenant:read}', now() + ${expiresIn}::interval, ${status}, ${status === 'pending' ? null : user!.id},
            ${status === 'approved' ? membership!.id : null})`
  const expired = { sessions: [] as string[], keys: [] as string[] }
  for (let i = 0; i < expiredPerKind; i++) {
    await grant(`stale-${i}`, 'pending', '-25 hours')
    await grant(`denied-${i}`, 'denied', '-1 minute')
    await retired('-1 minute')
    await projectMember('-1 second')
    expired.sessions.push(await session('-1 hour', null), await session('1 day', '-8 days'))
    await key(`expired-${i}`, '-1 minute')
    expired.keys.push(`expired-${i}`)
    await budget(`idle-${i}`, '-2 minutes')
  }
  const live = {
    sessions: [await session('1 day', null), await session('1 day', '-1 day')],
    keys: ['live'],
  }
  await key('live', '1 hour')
  await budget('busy', '-5 seconds')
  const liveProject = await projectMember('1 hour')
  const liveRetired = await retired('1 day')
  await grant('live', 'pending', '10 minutes')
  await grant('grace-pending', 'pending', '-23 hours')
  await grant('grace-approved', 'approved', '-1 hour')
  return { sql, run, userId: user!.id, expired, live, liveProject, liveRetired }
}

async function remaining(s: Awaited<ReturnType<typeof seed>>) {
  const { sql } = s
  const sessions = await sql<{ id: string }[]>`select id from sessions where user_id = ${s.userId}`
  const keys = await sql<{ key: string }[]>`select key from idempotency_keys where scope = ${`housekeeping-test:${s.run}`}`
  const budgets = await sql<{ id: string }[]>`select id from rate_budgets where id like ${`${s.run}-%`}`
  const projects = await sql<{ project_id: string }[]>`select project_id from project_members where user_id = ${s.userId}`
  const [retired] = await sql<{ live: boolean }[]>`select exists (select 1 from retired_credentials where digest = decode(${s.liveRetired}, 'hex')) as live`
  const grants = await sql<{ client_name: string }[]>`
    select client_name from device_authorizations where client_name like ${`${s.run}-%`} order by client_name`
  return {
    liveRetiredKept: retired!.live,
    deviceGrants: grants.map((r) => r.client_name.slice(s.run.length + 1)),
    sessions: sessions.map((r) => r.id).sort(),
    keys: keys.map((r) => r.key).sort(),
    budgets: budgets.map((r) => r.id),
    projects: projects.map((r) => r.project_id),
  }
}

/** One row past each retention period: an audit entry, and a dispatched event whose finished webhook message (with
 *  an attempt) is past its own. The event is due only once the message is gone, so the count shows the order. */
async function seedRetention(sql: Sql, config: Config) {
  const days = (n: number) => new Date(Date.now() - (n + 1) * 86_400_000)
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('housekeeping', ${`hk-${crypto.randomUUID()}`}) returning id`
  const entry = await recordAudit(sql, activityContext('test/housekeeping'), { action: 'storage.provisioned', tenantId: tenant!.id })
  await sealAudit(sql)
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`
    await tx`update audit_log set occurred_at = ${days(config.AUDIT_RETENTION_DAYS)} where id = ${entry.id}`
  })
  const [endpoint] = await sql<{ id: string }[]>`
    insert into webhook_endpoints (tenant_id, url, events, secret_sealed) values (${tenant!.id}, 'https://hooks.example.test/hk', '{audit.entry}', '\\x00') returning id`
  const [event] = await sql<{ id: string }[]>`
    insert into events (tenant_id, type, data, occurred_at, dispatched_at)
    values (${tenant!.id}, 'audit.entry', '{}', ${days(config.EVENTS_RETENTION_DAYS)}, ${days(config.EVENTS_RETENTION_DAYS)}) returning id`
  const at = days(config.WEBHOOK_MESSAGES_RETENTION_DAYS)
  const [message] = await sql<{ id: string }[]>`
    insert into webhook_messages (tenant_id, endpoint_id, event_id, event_type, status, created_at, last_attempt_at)
    values (${tenant!.id}, ${endpoint!.id}, ${event!.id}, 'audit.entry', 'succeeded', ${at}, ${at}) returning id`
  await sql`insert into webhook_attempts (message_id, endpoint_id, attempted_at, succeeded, duration_ms) values (${message!.id}, ${endpoint!.id}, ${at}, true, 5)`
}

describe('housekeeping', () => {
  test('the worker keeps a schedule matching the configuration', async () => {
    const handle = t.client.schedule.getHandle(housekeepingScheduleId(t.config))
    const schedule = await eventually('the worker to create the housekeeping schedule', () => handle.describe())
    expect(schedule.spec.intervals?.map((i) => i.every)).toEqual([t.config.HOUSEKEEPING_INTERVAL_MINUTES * 60_000])
    expect(schedule.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP)
    expect(schedule.action.workflowType).toBe(WorkflowType.housekeeping)
    expect(schedule.action.taskQueue).toBe(taskQueues(t.config).platform)
  })

  test('a triggered scheduled run purges exactly the expired rows and is visible by id and tenant', async () => {
    const s = await seed(own.sql)
    await seedRetention(own.sql, own.config)
    expect(await ensureSchedule(t.client, housekeepingSchedule(own.config), createLogger('silent'))).toBe('created')
    const handle = t.client.schedule.getHandle(housekeepingScheduleId(own.config))
    await handle.pause('only the trigger below may start a run')
    const before = await handle.describe()
    const seen = new Set(before.info.recentActions.map((a) => a.action.workflow.workflowId))

    await handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL)
    const started = await eventually(
      'the triggered run',
      async () => (await handle.describe()).info.recentActions.find((a) => !seen.has(a.action.workflow.workflowId))?.action.workflow,
    )
    const run = t.client.workflow.getHandle<() => Promise<HousekeepingResult>>(started.workflowId, started.firstExecutionRunId)
    const result = await run.result()
    // The worker's own database holds only what seed() wrote: one expired key, an expired and a long-revoked session;
    // and seedRetention()'s entry, message (with its attempt) and event.
    expect(result).toEqual({
      idempotencyKeysPurged: 1,
      sessionsPurged: 2,
      auditEntriesPurged: 1,
      webhookMessagesPurged: 1,
      eventsPurged: 1,
      rateBudgetsPurged: 1,
      projectMembersPurged: 1,
      // The live membership ends in an hour: within the 7 days' warning.
      projectMembersWarned: 1,
      retiredDigestsPurged: 1,
      deviceGrantsPurged: 2,
    })

    expect(await remaining(s)).toEqual({
      liveRetiredKept: true,
      deviceGrants: ['grace-approved', 'grace-pending', 'live'],
      sessions: [...s.live.sessions].sort(),
      keys: s.live.keys,
      budgets: [`${s.run}-busy`],
      projects: [s.liveProject],
    })

    expect(started.workflowId.startsWith(workflowIds.housekeeping(own.config))).toBe(true)
    const execution = await run.describe()
    expect(execution.status.name).toBe('COMPLETED')
    expect(execution.type).toBe(WorkflowType.housekeeping)
    expect(execution.taskQueue).toBe(taskQueues(own.config).platform)
    expect(execution.typedSearchAttributes.get(TENANT_ID)).toBe(SYSTEM_TENANT)

    const query = `WorkflowId = '${started.workflowId}' AND TenantId = '${SYSTEM_TENANT}' AND ExecutionStatus = 'Completed'`
    const listed = await eventually('the run in visibility', async () => {
      for await (const wf of t.client.workflow.list({ query })) return wf
      return undefined
    })
    expect(listed.runId).toBe(started.firstExecutionRunId)
  })

  test('a large backlog is purged across many small batches', async () => {
    const s = await seed(own.sql, 7)
    const input: HousekeepingInput = { batchSize: 3 }
    const handle = await t.client.workflow.start(WorkflowType.housekeeping, {
      workflowId: workflowIds.housekeeping(own.config, `test-${s.run}`),
      taskQueue: taskQueues(own.config).platform,
      args: [input],
      typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
      workflowExecutionTimeout: '1 minute',
    })
    expect(await handle.result()).toEqual({
      idempotencyKeysPurged: 7,
      sessionsPurged: 14,
      auditEntriesPurged: 0,
      webhookMessagesPurged: 0,
      eventsPurged: 0,
      rateBudgetsPurged: 7,
      projectMembersPurged: 7,
      projectMembersWarned: 1,
      retiredDigestsPurged: 7,
      deviceGrantsPurged: 14,
    })
    expect(await remaining(s)).toEqual({
      liveRetiredKept: true,
      deviceGrants: ['grace-approved', 'grace-pending', 'live'],
      sessions: [...s.live.sessions].sort(),
      keys: s.live.keys,
      budgets: [`${s.run}-busy`],
      projects: [s.liveProject],
    })
  })

  test('an invalid argument fails at once instead of being retried', async () => {
    const handle = await t.client.workflow.start(WorkflowType.housekeeping, {
      workflowId: workflowIds.housekeeping(t.config, `test-invalid-${crypto.randomUUID()}`),
      taskQueue: taskQueues(t.config).platform,
      args: [{ batchSize: 0 } satisfies HousekeepingInput],
      typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
      workflowExecutionTimeout: '1 minute',
    })
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(WorkflowFailedError)
    const activity = (err as WorkflowFailedError).cause
    expect(activity).toBeInstanceOf(ActivityFailure)
    expect((activity as ActivityFailure).cause).toBeInstanceOf(ApplicationFailure)
    expect(((activity as ActivityFailure).cause as ApplicationFailure).type).toBe(ErrorType.invalidArgument)
    // Non-retryable means one attempt: the failure event records attempt 1, not the 5 the policy allows.
    const history = await handle.fetchHistory()
    const started = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt)
    expect(started.length).toBeGreaterThan(0)
    expect(started.every((attempt) => attempt === 1)).toBe(true)
  })

  test('the schedule upsert creates, leaves alone, follows the interval and deletes', async () => {
    // A prefix of its own: this exercises the upsert without touching the schedule the worker owns.
    const base = { ...t.config, TEMPORAL_TASK_QUEUE_PREFIX: `sched-test-${crypto.randomUUID().slice(0, 8)}` }
    const log = createLogger('silent')
    const handle = t.client.schedule.getHandle(housekeepingScheduleId(base))
    try {
      expect(await ensureSchedule(t.client, housekeepingSchedule({ ...base, HOUSEKEEPING_INTERVAL_MINUTES: 15 }), log)).toBe('created')
      expect(await ensureSchedule(t.client, housekeepingSchedule({ ...base, HOUSEKEEPING_INTERVAL_MINUTES: 15 }), log)).toBe('unchanged')
      await handle.pause('operator pause')
      expect(await ensureSchedule(t.client, housekeepingSchedule({ ...base, HOUSEKEEPING_INTERVAL_MINUTES: 5 }), log)).toBe('updated')
      const updated = await handle.describe()
      expect(updated.spec.intervals?.[0]?.every).toBe(5 * 60_000)
      expect(updated.state.paused).toBe(true)
      expect(await ensureSchedule(t.client, housekeepingSchedule({ ...base, HOUSEKEEPING_INTERVAL_MINUTES: 5 }), log)).toBe('unchanged')
      expect(await ensureSchedule(t.client, housekeepingSchedule({ ...base, HOUSEKEEPING_INTERVAL_MINUTES: 0 }), log)).toBe('deleted')
      expect(await ensureSchedule(t.client, housekeepingSchedule({ ...base, HOUSEKEEPING_INTERVAL_MINUTES: 0 }), log)).toBe('disabled')
    } finally {
      await handle.delete().catch(() => {})
    }
  })
})
