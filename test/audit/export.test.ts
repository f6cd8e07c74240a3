// The audit export: a job that writes the tenant's trail over a window as gzip NDJSON into its export bucket, whose
// file a customer can check without trusting us (its SHA-256, every link recomputed with api/audit/canonical.ts,
// the chain head in the trailer), bounded in size, refused without storage, and private to the tenant's managers.
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { canonicalOf, linkHash, type ExportLine, type ExportTrailer } from '../../api/audit/canonical'
import { recordAudit } from '../../api/audit/service'
import { activityContext } from '../../api/identity/context'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { auditExportWorkflowId } from '../../workflows/contract-audit'
import { Client } from '../support/client'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
import { connectTemporal, eventually } from '../support/temporal'
import { provisionedTenant } from '../storage/helpers'
import { hourAgo, inAnHour, sealAudit } from '../support/audit'

// Provisioning and an export each wait on the worker.
setDefaultTimeout(60_000)

const api = useApi()
// The same server with a bound of one entry per export.
const capped = useApi({ AUDIT_EXPORT_MAX_ENTRIES: '1' })

/** One tenant with ready storage for the whole file: provisioning takes seconds. */
let provisioned: ReturnType<typeof provisionedTenant> | undefined
const tenant = () => (provisioned ??= provisionedTenant(api.url))

async function finished(client: Client, id: string) {
  return eventually(
    `audit export ${id} to finish`,
    async () => {
      const res = await client.get(`/tenants/current/audit-log/exports/${id}`)
      return ['succeeded', 'failed'].includes(res.json?.data?.status) ? res.json.data : undefined
    },
    45_000,
  )
}

describe('an export', () => {
  test('is a gzip NDJSON file whose SHA-256, every link and chain head a customer can check', async () => {
    const owner = await tenant()
    for (let i = 0; i < 3; i++) await patFor(owner.client, ['model:read'])
    // An entry whose details exercise the canonical form: jsonb's key order, escapes, non-ASCII and numbers that
    // JSON.stringify writes with an exponent.
    await recordAudit(api.sql, activityContext('test/audit-export'), {
      action: 'storage.provisioned',
      tenantId: owner.tenantId,
      details: {
        zz: 'é ü 日本 😀',
        a: 'quote " backslash \\ slash / tab \t newline \n bell \u0007',
        ü: 1,
        big: 1e21,
        small: 1.5e-7,
        neg: -3.25,
        nested: { bb: [1, 'x', null, true, false], a: {}, ab: [], ß: { z: 0.1 } },
      },
    })

    const started = await owner.client.post('/tenants/current/audit-log/exports', { from: hourAgo(), to: inAnHour() })
    expect(started.status).toBe(201)
    const id = started.json.data.id as string
    expect(started.json.data).toMatchObject({ status: 'queued', entriesWritten: 0, download: null, workflowId: auditExportWorkflowId(owner.tenantId, id) })

    const job = await finished(owner.client, id)
    expect(job.status).toBe('succeeded')
    expect(job.download.url).toBeString()
    expect(Date.parse(job.download.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000)
    expect(Date.parse(job.download.expiresAt) - Date.now()).toBeLessThanOrEqual(15 * 60_000)

    const download = await fetch(job.download.url)
    expect(download.status).toBe(200)
    const gz = Buffer.from(await download.arrayBuffer())
    expect(gz.length).toBe(job.bytes)
    expect(createHash('sha256').update(gz).digest('hex')).toBe(job.sha256)

    const lines = gunzipSync(gz)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    const trailer = lines.pop() as ExportTrailer
    const entries = lines as ExportLine[]
    expect(trailer).toEqual({ type: 'trailer', entries: entries.length, chainHead: job.chainHead })
    expect(job.entriesWritten).toBe(entries.length)

    // Exactly the tenant's entries of the window, in sequence order, the export's own start among them.
    const stored = await api.sql<{ id: string; seq: number; canonical: string; hash: Buffer }[]>`
      select id, seq, audit_canonical(a) as canonical, hash from audit_log a where chain = ${owner.tenantId} order by seq`
    expect(entries.map((e) => e.id)).toEqual(stored.map((r) => r.id))
    const own = entries.find((e) => e.action === 'audit_log.export_started')!
    // (A copy: bun's toMatchObject with asymmetric matchers strips keys from what it is given.)
    expect(structuredClone(own)).toMatchObject({
      target: { type: 'audit_export', id },
      actor: { type: 'user', id: owner.userId },
      details: { from: expect.any(String), to: expect.any(String) },
    })

    for (const [i, e] of entries.entries()) {
      // The TypeScript canonical form is the database's, byte for byte, and so the link recomputes.
      expect({ seq: e.seq, canonical: canonicalOf(e) }).toEqual({ seq: e.seq, canonical: stored[i]!.canonical })
      expect({ seq: e.seq, link: linkHash(e.prevHash, e) }).toEqual({ seq: e.seq, link: e.hash })
      expect(e.tenantId).toBe(owner.tenantId)
      if (i === 0) {
        expect(e.prevHash).toBe(e.seq === 1 ? null : stored[i - 1]!.hash.toString('hex'))
        continue
      }
      expect({ seq: e.seq, contiguous: e.seq === entries[i - 1]!.seq + 1 && e.prevHash === entries[i - 1]!.hash }).toEqual({ seq: e.seq, contiguous: true })
    }
    expect(trailer.chainHead).toEqual({ seq: entries.at(-1)!.seq, hash: entries.at(-1)!.hash })
    // An edited line no longer links: the check has teeth.
    const forged = { ...entries[1]!, details: { ...(entries[1]!.details ?? {}), scopes: ['tenant:manage'] } }
    expect(linkHash(forged.prevHash, forged)).not.toBe(forged.hash)

    // The workflow is findable by its readable id and the tenant, on the audit queue.
    const t = await connectTemporal()
    try {
      const handle = t.client.workflow.getHandle(auditExportWorkflowId(owner.tenantId, id))
      await handle.result() // the job row says succeeded once its last activity ran, a moment before the workflow ends
      const run = await handle.describe()
      expect(run.status.name).toBe('COMPLETED')
      expect(run.taskQueue).toBe(taskQueues(api.deps.config).audit)
      expect(run.typedSearchAttributes.get(TENANT_ID)).toBe(owner.tenantId)
    } finally {
      await t.close()
    }
  })

  test('a window holding more entries than the bound is refused, with nothing started; it may span the retention period', async () => {
    const owner = await tenant()
    const jobs = async () => (await api.sql`select count(*)::int as n from audit_exports where tenant_id = ${owner.tenantId}`)[0]!.n as number
    const before = await jobs()
    const client = new Client(capped.url).withBearer((await patFor(owner.client, ['tenant:manage'])).token)
    // 100 days: longer than a page of the log may span, within what an export may.
    const res = await client.post('/tenants/current/audit-log/exports', { from: new Date(Date.now() - 100 * 86_400_000).toISOString(), to: inAnHour() })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('AUDIT_LOG_EXPORT_TOO_LARGE')
    expect(await jobs()).toBe(before)
    const tooLong = await client.post('/tenants/current/audit-log/exports', { from: '2020-01-01T00:00:00Z', to: inAnHour() })
    expect(tooLong.json.code).toBe('AUDIT_LOG_WINDOW_TOO_LARGE')
    expect((await client.post('/tenants/current/audit-log/exports', {})).json.code).toBe('AUDIT_LOG_TIME_RANGE_REQUIRED')
    // Year 0 is a valid RFC 3339 time and JS Date, but no Postgres one: refused as invalid, not a server error.
    const yearZero = { from: '0000-01-01T00:00:00Z', to: '0000-02-01T00:00:00Z' }
    expect((await client.post('/tenants/current/audit-log/exports', yearZero)).json.code).toBe('AUDIT_LOG_INVALID_TIME_RANGE')
    expect((await client.get(`/tenants/current/audit-log?from=${yearZero.from}&to=${yearZero.to}`)).json.code).toBe('AUDIT_LOG_INVALID_TIME_RANGE')
    expect((await client.post('/tenants/current/audit-log/verifications', { ...yearZero, from: '0001-01-01T00:00:00+01:00' })).json.code).toBe(
      'AUDIT_LOG_INVALID_TIME_RANGE',
    )
  })

  test('a tenant without storage is told so, and nothing is recorded', async () => {
    const owner = await tenantOwner(api.url)
    const res = await owner.client.post('/tenants/current/audit-log/exports', { from: hourAgo(), to: inAnHour() })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('STORAGE_NOT_READY')
    await sealAudit(api.sql)
    const rows = await api.sql`select 1 from audit_log where tenant_id = ${owner.tenantId} and action = 'audit_log.export_started'`
    expect(rows.length).toBe(0)
  })

  test("another tenant's manager gets 404 for the export, and a token without tenant:manage gets 403", async () => {
    const owner = await tenant()
    const started = await owner.client.post('/tenants/current/audit-log/exports', { from: hourAgo(), to: inAnHour() })
    expect(started.status).toBe(201)
    const id = started.json.data.id as string

    const other = await tenantOwner(api.url)
    const foreign = await other.client.get(`/tenants/current/audit-log/exports/${id}`)
    expect(foreign.status).toBe(404)
    expect(foreign.text).not.toContain(owner.tenantId)
    expect((await other.client.get('/tenants/current/audit-log/exports/not-a-uuid')).status).toBe(404)

    const reader = owner.client.withBearer((await patFor(owner.client, ['tenant:read'])).token)
    expect((await reader.get(`/tenants/current/audit-log/exports/${id}`)).status).toBe(403)
    expect((await reader.post('/tenants/current/audit-log/exports', { from: hourAgo(), to: inAnHour() })).status).toBe(403)
    await finished(owner.client, id)
  })
})
