// The Prometheus metrics (docs/operations.md "Metrics"): what each process counts, that no label can grow with ids, and that
// only the separate loopback listener serves them.
import { describe, expect, test } from 'bun:test'
import type { Registry } from 'prom-client'
import { createApiMetrics } from '../../api/http/metrics'
import { serveMetrics } from '../../api/platform/metrics'
import { createWorkerMetrics } from '../../worker/metrics'
import { createLogger } from '../../api/platform/log'
import { recordAudit } from '../../api/audit/service'
import { activityContext } from '../../api/identity/context'
import { startApi, useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { ownDatabase } from '../support/own-database'
import { Client } from '../support/client'
import { patFor, signedUpUser, tenantOwner } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'

const api = useApi({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000', RATE_LIMIT_PRINCIPAL_PER_MINUTE: '100000', RATE_LIMIT_TENANT_PER_MINUTE: '100000' })

/** A request is observed by an after-response hook, which Elysia runs once the response is on its way: wait for
 *  the requests this test sent (none is in flight) before reading. */
async function settled(metrics = api.deps.metrics): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const text = await metrics.registry.metrics()
    if (value(text, 'rcp_http_requests_in_flight') === 0) {
      await Bun.sleep(0)
      return metrics.registry.metrics()
    }
    await Bun.sleep(5)
  }
  throw new Error('requests still in flight')
}
const scrape = () => settled()

/** The value of one series (labels given in the exposition's order), 0 when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (want.every((l) => line.includes(l))) return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return 0
}

const seriesOf = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))

describe('API metrics', () => {
  test('the audit seal lag is the age of the oldest entry waiting to be sealed, 0 once it is', async () => {
    // A database of its own, whose one API's sealer waits a minute: no other sealer of the run seals the entry.
    const own = await ownDatabase('seal_lag')
    const idle = await startApi({ DATABASE_URL: own.url, AUDIT_SEAL_INTERVAL_MS: '60000' })
    try {
      const lag = async () => value(await idle.deps.metrics.registry.metrics(), 'rcp_audit_seal_lag_seconds')
      await sealAudit(idle.sql)
      expect(await lag()).toBe(0)
      await recordAudit(idle.sql, activityContext('test/seal-lag'), { action: 'storage.provisioned', tenantId: crypto.randomUUID() })
      await Bun.sleep(300)
      expect(await lag()).toBeGreaterThanOrEqual(0.25)
      await sealAudit(idle.sql)
      expect(await lag()).toBe(0)
    } finally {
      await idle.stop()
      await own.scanAndDrop()
    }
  })

  test('requests are counted by route template, method and status, with their latency', async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['model:read'])
    const reader = new Client(api.url).withBearer(token)
    const before = await scrape()
    const labels = { route: '/v1/model-versions/:modelVersionId', method: 'GET', status: '404' }
    for (let i = 0; i < 3; i++) expect((await reader.get(`/model-versions/${crypto.randomUUID()}`)).status).toBe(404)
    const after = await scrape()
    expect(value(after, 'rcp_http_request_duration_seconds_count', labels) - value(before, 'rcp_http_request_duration_seconds_count', labels)).toBe(3)
    expect(value(after, 'rcp_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0)
  })

  test('1,000 distinct ids, tokens and tenants add no series, and no label carries any of them', async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['model:read'])
    const reader = new Client(api.url).withBearer(token)
    const ids: string[] = []
    await reader.get(`/model-versions/${crypto.randomUUID()}`)
    await new Client(api.url).withBearer('rcp_pat_warmup').get('/users/me')
    await fetch(`${api.url}/no-such-route/warm-up`)
    const before = await scrape()
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          const id = crypto.randomUUID()
          ids.push(id)
          await reader.get(`/model-versions/${id}`)
          await new Client(api.url).withBearer(`rcp_pat_${id}`).get('/users/me')
          await fetch(`${api.url}/no-such-route/${id}`)
        }),
      )
    }
    const after = await scrape()
    expect(
      seriesOf(after, 'rcp_http_request_duration_seconds_count').filter(
        (l) => !seriesOf(before, 'rcp_http_request_duration_seconds_count').some((b) => b.split(' ')[0] === l.split(' ')[0]),
      ),
    ).toEqual([])
    expect(after.split('\n').length).toBe(before.split('\n').length)
    const leaked = [token, owner.tenantId, owner.userId, ...ids].filter((secret) => after.includes(secret))
    expect(leaked).toEqual([])
  })

  test('authentication failures by reason, PAT cache hits and misses, idempotent replays', async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['tenant:read'])
    const before = await scrape()
    expect((await new Client(api.url).withBearer('rcp_pat_not-a-token').get('/users/me')).status).toBe(401)
    const reader = new Client(api.url).withBearer(token)
    for (let i = 0; i < 3; i++) expect((await reader.get('/users/me')).status).toBe(200)
    // The cache answers only while its feed's last heartbeat is fresher than the fence: on a loaded machine one can
    // come back late, and the reads meanwhile go to Postgres as misses (in one full run three reads counted no hit).
    // Read on, for up to 10 s, until two hits are counted.
    const hits = async () =>
      value(await scrape(), 'rcp_pat_cache_lookups_total', { result: 'hit' }) - value(before, 'rcp_pat_cache_lookups_total', { result: 'hit' })
    for (const until = Date.now() + 10_000; (await hits()) < 2 && Date.now() < until; ) expect((await reader.get('/users/me')).status).toBe(200)
    const key = crypto.randomUUID()
    const body = { name: 'Once', slug: `m-${key.slice(0, 8)}` }
    expect((await owner.client.post('/tenants', body, { 'idempotency-key': key })).status).toBe(201)
    expect((await owner.client.post('/tenants', body, { 'idempotency-key': key })).status).toBe(201)
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels)
    expect(delta('rcp_auth_failures_total', { reason: 'UNAUTHORIZED' })).toBe(1)
    expect(delta('rcp_pat_cache_lookups_total', { result: 'miss' })).toBeGreaterThanOrEqual(1)
    expect(delta('rcp_pat_cache_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(2)
    expect(delta('rcp_idempotency_outcomes_total', { outcome: 'replayed' })).toBe(1)
    // The replay is counted with the status it answered, not a default 200.
    expect(delta('rcp_http_request_duration_seconds_count', { route: '/v1/tenants', method: 'POST', status: '201' })).toBe(2)
  })

  test('refusals by the budget that ran out', async () => {
    const small = await startApi({ RATE_LIMIT_PRINCIPAL_PER_MINUTE: '3', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000' })
    try {
      const owner = await tenantOwner(small.url)
      const { token } = await patFor(owner.client, ['tenant:read'])
      const reader = new Client(small.url).withBearer(token)
      const statuses = []
      for (let i = 0; i < 5; i++) statuses.push((await reader.get('/users/me')).status)
      const refused = statuses.filter((s) => s === 429).length
      expect(refused).toBeGreaterThan(0)
      const after = await settled(small.deps.metrics)
      expect(value(after, 'rcp_rate_limit_refusals_total', { budget: 'user' })).toBe(refused)
      expect(value(after, 'rcp_http_request_duration_seconds_count', { route: '/v1/users/me', method: 'GET', status: '429' })).toBe(refused)
    } finally {
      await small.stop()
    }
  })

  test('only the separate listener serves them; the public port does not', async () => {
    const listener = serveMetrics(api.deps.metrics.registry, { host: '127.0.0.1', port: 0, log: createLogger('silent') })
    try {
      const res = await fetch(listener.url)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain('text/plain')
      expect(await res.text()).toContain('rcp_http_requests_in_flight')
      expect((await fetch(listener.url.replace('/metrics', '/v1/users/me'))).status).toBe(404)
    } finally {
      await listener.stop()
    }
    const pub = await fetch(`${api.url}/metrics`)
    expect(pub.status).toBe(404)
    expect(await pub.text()).not.toContain('rcp_http')
  })
})

test("docs/operations.md's Metrics table names every series the two processes register, and no other", async () => {
  const readme = await Bun.file(new URL('../../docs/operations.md', import.meta.url)).text()
  const section = readme.slice(readme.indexOf('## Metrics'), readme.indexOf('\n## ', readme.indexOf('## Metrics') + 1))
  const documented = new Set([...section.matchAll(/`(rcp_[a-z_]+)`/g)].map((m) => m[1]!))
  const own = (names: string[]) => names.filter((n) => !/^rcp_(process|nodejs)_/.test(n))
  const names = (registry: Registry) => own(registry.getMetricsAsArray().map((m) => m.name))
  const registered = [...names(createApiMetrics().registry), ...names(createWorkerMetrics(api.sql).registry)]
  expect(registered.filter((n) => !documented.has(n))).toEqual([])
  expect([...documented].filter((n) => !registered.includes(n))).toEqual([])
})

describe('worker metrics', () => {
  const workerUrl = () => `http://127.0.0.1:${process.env.WORKER_METRICS_PORT}/metrics`

  test("the worker's scrape has its own series, mail sent, and the Temporal SDK's worker metrics", async () => {
    let before = ''
    // The runner's worker may still be starting when this file begins.
    for (let i = 0; i < 300 && !before; i++)
      before = await fetch(workerUrl()).then(
        (r) => r.text(),
        async () => {
          await Bun.sleep(100)
          return ''
        },
      )
    const { email } = await signedUpUser(api.url)
    expect((await new Client(api.url).post('/password-resets', { email })).status).toBe(202)
    await waitForMail(email)
    let after = ''
    for (let i = 0; i < 50; i++) {
      after = await (await fetch(workerUrl())).text()
      if (value(after, 'rcp_mail_total', { outcome: 'sent' }) > value(before, 'rcp_mail_total', { outcome: 'sent' })) break
      await Bun.sleep(100)
    }
    expect(value(after, 'rcp_mail_total', { outcome: 'sent' })).toBeGreaterThan(value(before, 'rcp_mail_total', { outcome: 'sent' }))
    expect(seriesOf(after, 'rcp_webhook_dispatch_lag_seconds')).toHaveLength(1)
    expect(/^temporal_worker_task_slots_available\{/m.test(after)).toBe(true)
    expect(/^rcp_process_resident_memory_bytes\{service="worker"\}/m.test(after)).toBe(true)
  })
})
