/**
 * ./scripts/up: the whole platform on this machine — Postgres, Temporal (+ UI), MinIO, a mail catcher,
 * the worker and the API — with data kept under ${RCP_DATA_DIR:-~/.local/share/rcp}. Ctrl-C stops it all.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { createDb } from '../api/platform/db'
import { migrate } from '../api/platform/migrate'
import {
  CACHE_DIR,
  LOOPBACK_CIDRS,
  REPO_ROOT,
  assertPortFree,
  claimPidFile,
  killChildrenOnExit,
  newSecretKey,
  onShutdownSignal,
  releasePidFile,
  seconds,
  spawnChild,
  startMailCatcher,
  startMinio,
  startPostgres,
  startTemporal,
  startTogether,
  stopAll,
  tail,
  waitUntil,
  weightApi,
  type Child,
  type Stoppable,
} from './platform'

const started = performance.now()
killChildrenOnExit()
const say = (msg: string) => console.error(`[up] ${msg}`)

function port(name: string, fallback: number): number {
  const raw = process.env[name]
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isInteger(value) || value <= 0 || value > 65_535) throw new Error(`${name}=${raw} is not a port number`)
  return value
}

const ports = {
  api: port('PORT', 3000),
  postgres: port('RCP_POSTGRES_PORT', 54329),
  temporal: port('RCP_TEMPORAL_PORT', 7233),
  temporalUi: port('RCP_TEMPORAL_UI_PORT', 8233),
  temporalHttp: port('RCP_TEMPORAL_HTTP_PORT', 7243),
  minio: port('RCP_MINIO_PORT', 9000),
  minioConsole: port('RCP_MINIO_CONSOLE_PORT', 9001),
  smtp: port('RCP_SMTP_PORT', 1025),
  mail: port('RCP_MAIL_HTTP_PORT', 1080),
  apiMetrics: port('METRICS_PORT', 9464),
  workerMetrics: port('WORKER_METRICS_PORT', 9465),
  temporalSdkMetrics: port('TEMPORAL_METRICS_PORT', 9466),
}
const portEnv: Record<keyof typeof ports, string> = {
  api: 'PORT',
  postgres: 'RCP_POSTGRES_PORT',
  temporal: 'RCP_TEMPORAL_PORT',
  temporalUi: 'RCP_TEMPORAL_UI_PORT',
  temporalHttp: 'RCP_TEMPORAL_HTTP_PORT',
  minio: 'RCP_MINIO_PORT',
  minioConsole: 'RCP_MINIO_CONSOLE_PORT',
  smtp: 'RCP_SMTP_PORT',
  mail: 'RCP_MAIL_HTTP_PORT',
  apiMetrics: 'METRICS_PORT',
  workerMetrics: 'WORKER_METRICS_PORT',
  temporalSdkMetrics: 'TEMPORAL_METRICS_PORT',
}

const dataDir = process.env.RCP_DATA_DIR || join(homedir(), '.local', 'share', 'rcp')
const logs = join(dataDir, 'logs')

/** Generated once and kept: sessions, CSRF tokens and encrypted secrets must survive a restart. */
function secretKey(): string {
  if (process.env.SECRET_KEY) return process.env.SECRET_KEY
  const file = join(dataDir, 'secret_key')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  const key = newSecretKey()
  writeFileSync(file, `${key}\n`, { mode: 0o600 })
  return key
}

const servers: Stoppable[] = []
let apps: (Child | undefined)[] = []
let stopping: Promise<void> | undefined

const shutdown = () =>
  (stopping ??= (async () => {
    const t = performance.now()
    await stopAll(apps) // the API and the worker first, so they drain against live servers
    await stopAll(servers)
    releasePidFile()
    say(`stopped in ${seconds(t)}`)
  })())

onShutdownSignal(async (signal) => {
  console.error('')
  say(`${signal}: stopping everything`)
  await shutdown()
  return 0
})

async function startServers() {
  return startTogether(
    {
      pg: startPostgres({ dataDir: join(dataDir, 'postgres'), port: ports.postgres, database: 'rcp', logFile: join(logs, 'postgres.log') }),
      temporal: startTemporal({
        dbFile: join(dataDir, 'temporal', 'temporal.db'),
        port: ports.temporal,
        uiPort: ports.temporalUi,
        httpPort: ports.temporalHttp,
        logFile: join(logs, 'temporal.log'),
      }),
      minio: startMinio({ dataDir: join(dataDir, 'minio'), port: ports.minio, consolePort: ports.minioConsole, logFile: join(logs, 'minio.log') }),
      mail: startMailCatcher({ smtpPort: ports.smtp, httpPort: ports.mail, file: join(dataDir, 'mail', 'messages.jsonl') }),
    },
    servers,
  )
}

function firstCredentialHelp(api: string): string {
  const json = `-H 'content-type: application/json'`
  const jar = `-b "$JAR" -c "$JAR"`
  const pick = (field: string) => `sed -n 's/.*"${field}":"\\([^"]*\\)".*/\\1/p'`
  return [
    `  API=${api} JAR=$(mktemp)`,
    `  # 1. register, 2. sign in (keeps the session cookie in $JAR; CSRF token for cookie requests)`,
    `  curl -sS ${json} -d '{"email":"me@example.com","password":"correct horse battery staple"}' $API/v1/users`,
    `  CSRF=$(curl -sS ${jar} ${json} -d '{"email":"me@example.com","password":"correct horse battery staple"}' $API/v1/sessions | ${pick('csrfToken')})`,
    `  # 3. create a tenant (you become its owner and the session switches to it)`,
    `  curl -sS ${jar} ${json} -H "x-csrf-token: $CSRF" -d '{"name":"My lab","slug":"my-lab"}' $API/v1/tenants`,
    `  # 4. create a personal access token (shown once), 5. use it`,
    `  TOKEN=$(curl -sS ${jar} ${json} -H "x-csrf-token: $CSRF" -d '{"name":"cli","scopes":["tenant:read","apikey:read"]}' $API/v1/api-keys | ${pick('token')})`,
    `  curl -sS -H "Authorization: Bearer $TOKEN" $API/v1/tokens/self`,
  ].join('\n')
}

async function main(): Promise<void> {
  mkdirSync(logs, { recursive: true })
  const reaped = await claimPidFile(join(dataDir, 'run', 'pids.json'), 'scripts/up.ts')
  if (reaped.length > 0) say(`killed leftovers of an earlier run: ${reaped.join(', ')}`)
  const external = Boolean(process.env.DATABASE_URL)
  for (const [key, value] of Object.entries(ports) as [keyof typeof ports, number][]) {
    if (key === 'postgres' && external) continue
    await assertPortFree(value, key, portEnv[key])
  }

  say(`starting servers (data ${dataDir}, logs ${logs})`)
  const s = await startServers()
  say(`servers ready in ${seconds(started)}`)
  const sql = createDb(s.pg.url, { max: 1 })
  try {
    const applied = await migrate(sql)
    say(applied.length > 0 ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'database schema up to date')
  } finally {
    await sql.end({ timeout: 5 })
  }

  const api = process.env.PUBLIC_URL ?? `http://127.0.0.1:${ports.api}`
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    PORT: String(ports.api),
    PUBLIC_URL: api,
    DATABASE_URL: s.pg.url,
    TEMPORAL_ADDRESS: s.temporal.address,
    TEMPORAL_NAMESPACE: s.temporal.namespace,
    S3_ENDPOINT: s.minio.endpoint,
    S3_ACCESS_KEY: s.minio.accessKey,
    S3_SECRET_KEY: s.minio.secretKey,
    SMTP_URL: s.mail.smtpUrl,
    SECRET_KEY: secretKey(),
    METRICS_PORT: String(ports.apiMetrics),
    WORKER_METRICS_PORT: String(ports.workerMetrics),
    TEMPORAL_METRICS_PORT: String(ports.temporalSdkMetrics),
    // A local OpenID Provider (or webhook receiver) on this machine is reachable in development; production never sets it.
    OUTBOUND_ALLOW_PRIVATE_CIDRS: process.env.OUTBOUND_ALLOW_PRIVATE_CIDRS ?? LOOPBACK_CIDRS,
    WORKFLOW_BUNDLE_CACHE_DIR: process.env.WORKFLOW_BUNDLE_CACHE_DIR ?? join(CACHE_DIR, 'workflow-bundles'),
  }
  const bun = process.execPath
  const worker = existsSync(join(REPO_ROOT, 'worker', 'main.ts'))
    ? spawnChild('worker', { cmd: [bun, 'worker/main.ts'], env, logFile: join(logs, 'worker.log') })
    : undefined
  if (!worker) say('worker/main.ts does not exist yet: starting without a worker')
  const apiChild = spawnChild('api', { cmd: [bun, 'api/main.ts'], env, logFile: join(logs, 'api.log') })
  apps = [apiChild, worker]
  await waitUntil(apiChild, 'GET /readyz = 200', async () => (await fetch(`http://127.0.0.1:${ports.api}/readyz`, { signal: AbortSignal.timeout(3000) })).ok)
  say(weightApi(apiChild.pid))

  const rows: [string, string][] = [
    ['API', api],
    ['Console', `${api}/console`],
    ['OpenAPI docs', `${api}/v1/docs`],
    ['OpenAPI JSON', `${api}/v1/openapi.json`],
    ['Metrics', `http://127.0.0.1:${ports.apiMetrics}/metrics (API)  http://127.0.0.1:${ports.workerMetrics}/metrics (worker)`],
    ['Temporal UI', s.temporal.uiUrl],
    ['MinIO console', `${s.minio.consoleUrl}  (user ${s.minio.accessKey}, password ${s.minio.secretKey})`],
    ['Mail inbox', `${s.mail.httpUrl}  (SMTP ${s.mail.smtpUrl})`],
    ['Postgres', s.pg.external ? '(DATABASE_URL from your environment)' : s.pg.url],
    ['Temporal', `${s.temporal.address}  (namespace ${s.temporal.namespace})`],
    ['S3 endpoint', s.minio.endpoint],
    ['Data / logs', `${dataDir}  /  ${logs}`],
  ]
  console.log(`\n  Robot Control Plane is up in ${seconds(started)}. Ctrl-C stops everything.\n`)
  for (const [name, value] of rows) console.log(`  ${name.padEnd(14)} ${value}`)
  console.log(`\n  A first credential (copy-paste into a shell):\n${firstCredentialHelp(api)}\n`)

  // Any child dying takes the platform down loudly rather than leaving a half-working stack.
  const watched = [apiChild, worker, s.pg.child, s.temporal.child, s.minio.child].filter((c): c is Child => c !== undefined)
  const died = await Promise.race(watched.map((c) => c.exited.then(() => c)))
  if (stopping) return
  say(`${died.name} exited unexpectedly (code ${await died.exited}); log ${died.logFile}:\n${tail(died.logFile)}`)
  await shutdown()
  process.exit(1)
}

main().catch(async (err: unknown) => {
  say(`start-up failed: ${err instanceof Error ? err.message : String(err)}`)
  await shutdown()
  process.exit(1)
})
