// What a request did names the request (issue 35, one request context): its audit entry and its services' log lines
// carry the request id and, in a traced process, the trace id, both read from the context the service was given.
// The traced API runs as deployed (api/main.ts in a process of its own, exporting OTLP/HTTP JSON to a receiver in
// this process) with Temporal out of reach, so the mail its request queues cannot be started and the mail
// dispatcher logs that, as it does in production. The fixtures use an untraced API in this process, which also
// shows the trace id absent when tracing is off.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, REPO_ROOT, spawnChild, waitUntil, type Child } from '../../scripts/platform'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { startOtlpReceiver } from '../support/otlp-receiver'
import { eventually } from '../support/temporal'

const api = useApi()
const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'request-ids-'))

/** The audit entries a request wrote, sealed. */
async function entriesOf(requestId: string) {
  await sealAudit(api.sql)
  const rows = await api.sql<{ action: string; request_id: string; trace_id: string | null }[]>`
    select action, request_id, trace_id from audit_log where request_id = ${requestId} order by action`
  return [...rows]
}

describe('in a traced API', () => {
  const receiver = startOtlpReceiver()
  let traced: { child: Child; base: string; logFile: string }
  beforeAll(async () => {
    const logFile = join(dir, 'traced-api.log')
    const port = await freePort()
    const child = spawnChild('traced-api', {
      cmd: [process.execPath, 'api/main.ts'],
      cwd: REPO_ROOT,
      logFile,
      env: {
        ...process.env,
        PORT: String(port),
        METRICS: 'false',
        LOG_LEVEL: 'info',
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
    })
    traced = { child, base: `http://127.0.0.1:${port}`, logFile }
    await waitUntil(child, 'GET /healthz', async () => (await fetch(`${traced.base}/healthz`)).ok, 60_000)
  }, 120_000)
  afterAll(async () => {
    await traced?.child.stop()
    receiver.stop()
  })

  test("the audit entry and the mail dispatcher's log line carry the request's id and trace id", async () => {
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['tenant:read', 'tenant:manage'])
    const res = await new Client(traced.base).withBearer(token).post(`/users/${owner.userId}/password-reset-requests`)
    expect(res.status).toBe(202)
    const requestId = res.headers.get('x-request-id')!

    const span = await eventually("the request's span", async () =>
      receiver.spans.find((s) => s.service === 'rcp-api' && s.attributes['rcp.request_id'] === requestId),
    )
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)

    // The account's entry and the tenant's (api/password-resets/service.ts mailReset), both from this request.
    expect(await entriesOf(requestId)).toEqual([
      { action: 'membership.password_reset_requested', request_id: requestId, trace_id: span.traceId },
      { action: 'user.password_reset_requested', request_id: requestId, trace_id: span.traceId },
    ])

    // The service's own line (not the access log's): Temporal is away, so the reset mail waits for the sweep.
    const line = await eventually("the mail dispatcher's log line", async () =>
      readFileSync(traced.logFile, 'utf8')
        .split('\n')
        .find((l) => l.includes('starting mail workflows failed') && l.includes(requestId)),
    )
    expect(JSON.parse(line)).toMatchObject({ level: 'warn', requestId, trace_id: span.traceId })
  }, 120_000)
})

describe('in an untraced API', () => {
  test('the audit entry carries the request id, and no trace id', async () => {
    const owner = await tenantOwner(api.url)
    const res = await owner.client.post('/api-keys', { name: 'ids', scopes: ['tenant:read'] })
    expect(res.status).toBe(201)
    const requestId = res.headers.get('x-request-id')!
    expect(await entriesOf(requestId)).toEqual([{ action: 'api_key.created', request_id: requestId, trace_id: null }])
  })
})
