// Each meter from the work it measures, through the runner's real worker: a package build, a model validation, the
// hourly storage sample (its workflow on the platform queue), and API requests folded per credential class.
import { describe, expect, test } from 'bun:test'
import { SYSTEM_TENANT, TENANT_ID, taskQueues } from '../../workflows/contract'
import { type StorageSampleResult, UsageWorkflowType } from '../../workflows/contract-usage'
import { makeProfile, makeVersion, modelTenant, packageIn } from '../edge-packages/helpers'
import { sha256, settled, uploadThroughUrls } from '../models/support'
import { localS3, useApiAndTemporal } from '../storage/helpers'
import { patFor, tenantOwner } from '../support/fixtures'

const env = useApiAndTemporal()

const eventsOf = async (tenantId: string, meter: string) => [
  ...(await env.api.sql<{ quantity: string; subject: string | null; idempotency_key: string; project_id: string | null }[]>`
    select quantity::text, subject, idempotency_key, project_id from usage_events where tenant_id = ${tenantId} and meter = ${meter} order by id`),
]
const total = async (tenantId: string, meter: string) => (await eventsOf(tenantId, meter)).reduce((n, e) => n + BigInt(e.quantity), 0n)

describe('meters from the work they measure', () => {
  test('a package build that finishes ready is one build and its archive bytes, in the transaction that makes it ready', async () => {
    const t = await modelTenant(env.api.url)
    const profileId = await makeProfile(env.api.sql, t.tenantId)
    const version = await makeVersion(env.api.sql, t.tenantId, t.buckets.bucket!.name, { 'policy.onnx': Buffer.from('bytes of a policy') })
    const res = await t.models.post(`/model-versions/${version.id}/edge-inference-package`, {
      mode: 'remote_ws',
      remotePolicyHost: 'policy.internal',
      remotePolicyPort: 8000,
      steps: 5,
      useFakeTransport: true,
      embodimentProfileId: profileId,
    })
    expect(res.status).toBe(201)
    const pkg = await packageIn(t.models, res.json.data.id, ['ready', 'failed'])
    expect(pkg.status).toBe('ready')
    expect(await eventsOf(t.tenantId, 'edge_package.builds')).toEqual([
      { quantity: '1', subject: null, idempotency_key: `edge_package.builds:${pkg.id}`, project_id: null },
    ])
    expect(await eventsOf(t.tenantId, 'edge_package.bytes')).toEqual([
      { quantity: String(pkg.artifact.sizeBytes), subject: null, idempotency_key: `edge_package.bytes:${pkg.id}`, project_id: null },
    ])
    // The event and the ready row commit together: both or neither.
    const [row] = await env.api.sql`
      select (select count(*)::int from usage_events u where u.tenant_id = p.tenant_id and u.idempotency_key = 'edge_package.builds:' || p.id) as n, p.status
        from edge_packages p where p.id = ${pkg.id}`
    expect(row).toEqual({ n: 1, status: 'ready' })
  }, 120_000)

  test('a validation is one distinct model version and the CPU milliseconds its reads and hashes took, per run', async () => {
    const t = await modelTenant(env.api.url)
    const body = Buffer.alloc(4 * 1024 * 1024, 7)
    const v = (
      await t.pat.post('/model-versions', {
        name: 'metered',
        format: 'onnx',
        source: { kind: 'imported_checkpoint', path: 'models/m.onnx', sizeBytes: body.length, sha256: sha256(body) },
      })
    ).json.data
    await uploadThroughUrls(t.pat, v.id, { 'models/m.onnx': body })
    expect((await t.pat.post(`/model-versions/${v.id}/validations`)).status).toBe(202)
    expect((await settled(t.pat, v.id)).status).toBe('ready')
    const versions = await eventsOf(t.tenantId, 'model_validation.versions')
    expect(versions.map((e) => [e.quantity, e.subject])).toEqual([['1', v.id]])
    const cpu = await eventsOf(t.tenantId, 'model_validation.cpu')
    expect(cpu).toHaveLength(1)
    // Hashing 4 MiB is work: at least a millisecond of CPU, rounded up.
    expect(BigInt(cpu[0]!.quantity)).toBeGreaterThanOrEqual(1n)
    expect(cpu[0]!.idempotency_key.slice('model_validation.cpu:'.length)).toBe(versions[0]!.idempotency_key.slice('model_validation.versions:'.length))
  }, 120_000)

  test("the hourly storage sample adds each tenant's stored bytes as byte-hours once per hour", async () => {
    const t = await modelTenant(env.api.url)
    await localS3().putObject(t.buckets.bucket!.name, 'data/a.bin', Buffer.alloc(3000, 1))
    const summary = (await t.client.get('/tenants/current/storage-summary?refresh=true')).json.data
    expect(summary.totalBytes).toBeGreaterThanOrEqual(3000)
    const run = (n: number) =>
      env.t.client.workflow.execute(UsageWorkflowType.storageSample, {
        taskQueue: taskQueues(env.t.config).platform,
        workflowId: `${env.t.config.TEMPORAL_TASK_QUEUE_PREFIX}-usage-storage-sample/test-${crypto.randomUUID()}-${n}`,
        typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
        args: [],
      }) as Promise<StorageSampleResult>
    const first = await run(1)
    const second = await run(2)
    const hours = [...new Set([first.hour, second.hour])]
    const samples = await eventsOf(t.tenantId, 'storage.byte_hours')
    // Two runs in one hour record one sample; across an hour boundary, one each.
    expect(samples.map((s) => s.idempotency_key)).toEqual(hours.map((h) => `storage.byte_hours:${h}`))
    expect(samples.every((s) => s.quantity === String(summary.totalBytes))).toBe(true)
    expect((await eventsOf(t.tenantId, 'storage.peak_bytes')).map((s) => s.quantity)).toEqual(hours.map(() => String(summary.totalBytes)))
  }, 60_000)

  test('API requests are counted per credential class from the budgets, one event per flush, not a row per request', async () => {
    const owner = await tenantOwner(env.api.url)
    const pat = owner.client.withBearer((await patFor(owner.client, ['tenant:read'])).token)
    await env.api.deps.requestTally.flush()
    const before = { session: await total(owner.tenantId, 'api_requests.session'), pat: await total(owner.tenantId, 'api_requests.personal_access_token') }
    for (let i = 0; i < 7; i++) expect((await pat.get('/projects')).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await owner.client.get('/projects')).status).toBe(200)
    const rowsBefore = (await eventsOf(owner.tenantId, 'api_requests.personal_access_token')).length
    await env.api.deps.requestTally.flush()
    expect(await total(owner.tenantId, 'api_requests.personal_access_token')).toBe(before.pat + 7n)
    expect(await total(owner.tenantId, 'api_requests.session')).toBe(before.session + 3n)
    expect((await eventsOf(owner.tenantId, 'api_requests.personal_access_token')).length).toBeLessThanOrEqual(rowsBefore + 1)
  })

  test('a request refused by its budget is not counted', async () => {
    const owner = await tenantOwner(env.api.url)
    await env.api.deps.requestTally.flush()
    const before = await total(owner.tenantId, 'api_requests.session')
    const perMinute = env.api.deps.config.RATE_LIMIT_PRINCIPAL_PER_MINUTE
    let admitted = 0
    let refused = 0
    for (let i = 0; refused === 0 && i < perMinute * 2; i++) {
      const res = await owner.client.get('/projects')
      if (res.status === 429) refused++
      else admitted++
    }
    expect(refused).toBe(1)
    expect(admitted).toBeGreaterThan(0)
    await env.api.deps.requestTally.flush()
    expect(await total(owner.tenantId, 'api_requests.session')).toBe(before + BigInt(admitted))
  })
})
