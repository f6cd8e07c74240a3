// The backup and restore drill (docs/operations.md "Backup and restore"): a platform on its own database and its own MinIO does
// real work, is backed up with scripts/backup.ts, wiped, and restored; then an existing session, an existing PAT,
// an existing webhook endpoint and an existing package all still work, down to the package's signature. Every table
// holds rows before the backup (drill-seed.ts; information_schema says which tables there are), one of them several
// MB, and every one comes back.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPublicKey, verify } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Config } from '../../api/platform/config'
import { createDb } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { migrate } from '../../api/platform/migrate'
import { NOT_BACKED_UP } from '../../scripts/backup-queries'
import { freePort, startMinio, type MinioServer } from '../../scripts/platform'
import { startWorker, type RunningWorker } from '../../worker/run'
import { FEATURES, packageIn } from '../edge-packages/helpers'
import { settled, sha256, uploadThroughUrls } from '../models/support'
import { provisionedTenant } from '../storage/helpers'
import { startApi, type TestApi } from '../support/api'
import { patFor } from '../support/fixtures'
import { auditLeaks, otherScans } from '../support/secrets'
import { eventually } from '../support/temporal'
import { makeCertificates, Receiver } from '../support/webhook-receiver'
import { BIG_TABLE, RUNS, seedBySql, seedThroughApi } from './drill-seed'

const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'drill-'))
const database = `rcp_drill_${crypto.randomUUID().slice(0, 8)}`
const admin = createDb(process.env.DATABASE_URL!, { max: 1 })
let minio: MinioServer
let minioPorts: { port: number; consolePort: number }
let settings: Record<string, string>
let config: Config
let running: { api: TestApi; worker: RunningWorker } | undefined
let receiver: Receiver

const startMinioHere = () => startMinio({ dataDir: join(dir, 'minio'), ...minioPorts, logFile: join(dir, 'minio.log') })

/** `bun scripts/backup.ts <verb> <dir>` as docs/operations.md runs it, with the platform's environment. */
async function command(verb: 'backup' | 'restore'): Promise<string> {
  const run = Bun.spawn([process.execPath, 'scripts/backup.ts', verb, join(dir, 'backup')], {
    env: { ...process.env, ...settings },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, exitCode] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  if (exitCode !== 0) throw new Error(`backup.ts ${verb} exited ${exitCode}: ${stderr}`)
  return stdout
}

/** Rows in every table of the database (information_schema: every base table there is, not a list kept here). */
async function rowCounts(): Promise<Record<string, number>> {
  const sql = createDb(settings.DATABASE_URL!, { max: 1 })
  try {
    const tables = await sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`
    const counts: Record<string, number> = {}
    for (const { name } of tables) counts[name] = (await sql<{ n: number }[]>`select count(*)::int as n from ${sql(name)}`)[0]!.n
    return counts
  } finally {
    await sql.end()
  }
}
const empty = (counts: Record<string, number>) => Object.keys(counts).filter((t) => counts[t] === 0)

async function up(): Promise<TestApi> {
  const api = await startApi(settings)
  running = { api, worker: await startWorker(config, { sql: api.sql, schedules: false, log: createLogger('silent') }) }
  return api
}
async function down() {
  await running?.worker.shutdown()
  await running?.api.stop()
  running = undefined
}

beforeAll(async () => {
  minioPorts = { port: await freePort(), consolePort: await freePort() }
  minio = await startMinioHere()
  await admin`create database ${admin(database)}`
  const url = new URL(process.env.DATABASE_URL!)
  url.pathname = `/${database}`
  const certs = makeCertificates(dir)
  receiver = await new Receiver(certs).start()
  settings = {
    DATABASE_URL: url.toString(),
    S3_ENDPOINT: minio.endpoint,
    S3_ACCESS_KEY: minio.accessKey,
    S3_SECRET_KEY: minio.secretKey,
    TEMPORAL_TASK_QUEUE_PREFIX: `rcp-drill-${crypto.randomUUID().slice(0, 8)}`,
    OUTBOUND_CA_FILE: certs.caFile,
    WEBHOOK_DISPATCHER: 'true',
    WEBHOOK_DISPATCH_POLL_MS: '250',
    WORKER_TASK_QUEUES: 'storage,models,packages,webhooks',
    // The restored API answers where the old one did: the clients (and their cookie and PAT) keep their address.
    PORT: String(await freePort()),
  }
  config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', ...settings })
  const sql = createDb(settings.DATABASE_URL!, { max: 1 })
  try {
    await migrate(sql)
  } finally {
    await sql.end()
  }
}, 120_000)
afterAll(async () => {
  await down()
  if (settings) otherScans.push(await auditLeaks(settings.DATABASE_URL!))
  await receiver?.stop()
  await minio?.stop()
  await admin`drop database if exists ${admin(database)} with (force)`
  await admin.end()
  rmSync(dir, { recursive: true, force: true })
})

describe('backup and restore', () => {
  test('back up, wipe, restore: a session, a PAT, a webhook endpoint and a signed package all survive', async () => {
    let api = await up()
    // Real work through the API: storage, a validated model, a built package, a webhook endpoint.
    const owner = await provisionedTenant(api.url)
    const pat = owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write', 'tenant:manage'])).token)
    const checkpoint = Buffer.from('a small policy checkpoint, for the drill')
    const path = 'checkpoints/drill/policy.onnx'
    const version = (
      await pat.post('/model-versions', {
        name: 'drill',
        format: 'onnx',
        source: { kind: 'imported_checkpoint', path, sizeBytes: checkpoint.length, sha256: sha256(checkpoint) },
      })
    ).json.data
    await uploadThroughUrls(pat, version.id, { [path]: checkpoint })
    expect((await pat.post(`/model-versions/${version.id}/validations`)).status).toBe(202)
    expect((await settled(pat, version.id, 60_000)).status).toBe('ready')
    const profile = (await pat.post('/embodiment-profiles', { name: 'drill arm', robotType: 'so100', controlRateHz: 30, ...FEATURES })).json.data
    const ordered = await pat.post(`/model-versions/${version.id}/edge-inference-package`, {
      embodimentProfileId: profile.id,
      mode: 'local',
      targetArch: 'cpu',
    })
    expect(ordered.status, ordered.text).toBe(201)
    const built = await packageIn(pat, ordered.json.data.id, ['ready', 'failed'], 180_000)
    expect(built.status).toBe('ready')
    const endpoint = (await pat.post('/webhook-endpoints', { url: `https://127.0.0.1:${receiver.port}/drill`, events: ['storage.provisioned'] })).json.data
    receiver.secrets.push(endpoint.secret)
    // Every table gets rows (drill-seed.ts), one of them several MB: a backup that stops after a large table fails here.
    expect((await pat.post(`/webhook-endpoints/${endpoint.endpoint.id}/test-events`)).status).toBeLessThan(300)
    await eventually('the test event before the backup', async () => receiver.deliveries.find((d) => d.body.type !== 'storage.provisioned'), 30_000)
    const deliveredBefore = receiver.deliveries.length
    await seedThroughApi(api.url, owner, pat, built.id)
    await seedBySql(settings.DATABASE_URL!, owner.tenantId, owner.userId)
    // audit_inbox is exempt: the running API's sealer empties it within AUDIT_SEAL_INTERVAL_MS of the seed.
    expect(empty(await rowCounts()).filter((t) => t !== 'audit_inbox')).toEqual([])
    expect(await command('backup')).toMatch(/^backed up \d+ tables and \d+ buckets/)
    const manifest = JSON.parse(readFileSync(join(dir, 'backup', 'manifest.json'), 'utf8'))
    expect(manifest.tables).toContain('edge_packages')
    expect(manifest.regions[0]!.buckets.length).toBeGreaterThanOrEqual(3)
    expect(statSync(join(dir, 'backup', 'db', `${BIG_TABLE}.bin`)).size).toBeGreaterThan(4_000_000)

    // The disaster: both stores gone.
    await down()
    await admin`drop database ${admin(database)} with (force)`
    await admin`create database ${admin(database)}`
    await minio.stop()
    rmSync(join(dir, 'minio'), { recursive: true, force: true })
    minio = await startMinioHere()
    expect(
      await (await import('../../api/storage/s3'))
        .s3For({ id: 'local', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey })
        .listBuckets(),
    ).toEqual([])

    expect(await command('restore')).toContain('restored')
    // Every table came back with rows, the big one whole. The backup was taken while the platform ran, so the
    // audit inbox may have been sealed (emptied) between the count above and the backup's snapshot.
    const restored = await rowCounts()
    expect(empty(restored).filter((t) => !NOT_BACKED_UP.has(t) && t !== 'audit_inbox')).toEqual([])
    expect(restored[BIG_TABLE]).toBe(RUNS)
    api = await up()
    // The entry that waited to be sealed is sealed after the restore, and the tenant's chain verifies.
    const hour = 3_600_000
    const verified = await owner.client.post('/tenants/current/audit-log/verifications', {
      from: new Date(Date.now() - hour).toISOString(),
      to: new Date(Date.now() + hour).toISOString(),
    })
    expect(verified.json.data).toMatchObject({ intact: true, firstBrokenSeq: null })

    // The same browser session, the same PAT.
    expect((await owner.client.get('/users/me')).json.data.user.email).toBe(owner.email)
    expect((await pat.get('/tokens/self')).status).toBe(200)
    // The same package: downloaded from the restored bucket, its bytes and its signature what they were.
    const pkg = (await pat.get(`/edge-inference-packages/${built.id}`)).json.data
    const bytes = Buffer.from(await (await fetch(pkg.artifact.downloadUrl)).arrayBuffer())
    expect(sha256(bytes)).toBe(built.artifact.sha256)
    const keys = (await (await fetch(`${api.url}/v1/edge-inference-packages/signing-keys`)).json()).data
    const { stdout } = Bun.spawnSync(['tar', '-xzOf', '-', 'provenance.intoto.jsonl'], { stdin: bytes })
    const envelope = JSON.parse(stdout.toString())
    const payload = Buffer.from(envelope.payload, 'base64')
    const pae = Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(envelope.payloadType)} ${envelope.payloadType} ${payload.length} `), payload])
    expect(verify(null, pae, createPublicKey(keys[0].publicKeyPem), Buffer.from(envelope.signatures[0].sig, 'base64'))).toBe(true)
    // The same webhook endpoint: its test event arrives signed with the secret shown at registration.
    expect((await pat.post(`/webhook-endpoints/${endpoint.endpoint.id}/test-events`)).status).toBeLessThan(300)
    const delivery = await eventually(
      'the test event after the restore',
      async () => receiver.deliveries.slice(deliveredBefore).find((d) => d.body.type !== 'storage.provisioned'),
      30_000,
    )
    expect(delivery.verifiedBy).toEqual([0])
    // And the restored platform keeps working: a new object lands in the restored tenant bucket.
    expect(readFileSync(join(dir, 'backup', 'manifest.json'), 'utf8')).toContain(owner.buckets.bucket!.name)
  }, 400_000)
})
