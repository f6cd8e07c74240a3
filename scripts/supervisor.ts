/**
 * The process supervisor of ./scripts/up, ./scripts/test and the benchmarks: each child runs in its own process
 * group, writes to a log file rather than the terminal, and is stopped in the order its caller chooses. Importing
 * this installs nothing: the entry point calls killChildrenOnExit() (and onShutdownSignal) itself.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { REPO_ROOT } from './env'

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

/** The API's CPU weight where the platform shares one machine (`./scripts/up`, and the mixed-load bench, which runs
 *  the platform as it does): a latency-bound event loop that uses an eighth of a core, beside batch work that takes
 *  whatever it is given (Postgres under member counts, Temporal, the worker, argon2id in the hasher's own session).
 *  At the default weight each of those sessions gets an equal share, and a PAT read waited tens of milliseconds for
 *  its turn; at -10 (about nine times the weight) the API runs when it wakes. What that costs the others is measured
 *  in bench/README.md ("Mixed load"). */
export const API_AUTOGROUP_NICE = -10

/** Sets the niceness of the autogroup of `pid`'s session (sched(7)), which weighs every thread of that session
 *  against the machine's other sessions. Only for a child in a session of its own (spawnChild's are): a child still
 *  in ours would carry us along. Answers null when set, else why not: no autogroups in the kernel, or a negative
 *  value refused without CAP_SYS_NICE. Where each service has a CPU cgroup of its own (systemd, containers,
 *  Kubernetes) the kernel weighs those instead, and this does nothing: set the cgroup's weight there. */
export function setAutogroupNice(pid: number, nice: number): string | null {
  try {
    if (readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() !== '1') return 'autogroup scheduling is off in this kernel'
    const group = (p: number | 'self') => readFileSync(`/proc/${p}/autogroup`, 'utf8').split(' ')[0]
    if (group(pid) === group('self')) return `process ${pid} is in our own session's autogroup`
    writeFileSync(`/proc/${pid}/autogroup`, String(nice))
    return null
  } catch (err) {
    return (err as Error).message
  }
}

/** Gives the API's process `pid` the weight ./scripts/up gives it; answers the line that says what happened, for the
 *  caller to print (up and the mixed-load bench say the same). */
export function weightApi(pid: number): string {
  const unweighted = setAutogroupNice(pid, API_AUTOGROUP_NICE)
  return unweighted ? `the API runs at the default CPU weight (${unweighted})` : `the API's CPU weight: autogroup niceness ${API_AUTOGROUP_NICE}`
}

const children = new Set<Child>()
let pidFile: string | undefined
let exitHandlerInstalled = false

const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    /* already gone */
  }
}

export function spawnChild(name: string, opts: SpawnOptions): Child {
  // Children are detached, so nothing else would stop them if this process died without its handler.
  if (!exitHandlerInstalled) throw new Error(`spawnChild(${name}): call killChildrenOnExit() first, in the entry point`)
  const logFile = opts.logFile ?? ''
  let fd: number | undefined
  if (!opts.pipe) {
    mkdirSync(dirname(logFile), { recursive: true })
    fd = openSync(logFile, 'a')
  }
  // detached: its own process group, so Ctrl-C in the terminal reaches only us and we stop children in order.
  const proc = Bun.spawn(opts.cmd, {
    cwd: opts.cwd ?? REPO_ROOT,
    env: opts.env ?? process.env,
    stdin: 'ignore',
    stdout: fd ?? 'pipe',
    stderr: fd ?? 'pipe',
    detached: true,
  })
  if (fd !== undefined) closeSync(fd)
  let done = false
  const exited = proc.exited.then((code) => {
    done = true
    return proc.signalCode ? null : code
  })
  const child: Child = {
    name,
    pid: proc.pid,
    logFile,
    exited,
    stopSignal: opts.stopSignal ?? 'SIGTERM',
    stdout: opts.pipe ? (proc.stdout as ReadableStream<Uint8Array>) : undefined,
    stderr: opts.pipe ? (proc.stderr as ReadableStream<Uint8Array>) : undefined,
    running: () => !done,
    async stop() {
      if (!done) {
        try {
          process.kill(proc.pid, opts.stopSignal ?? 'SIGTERM')
        } catch {
          /* exited meanwhile */
        }
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
/** Last resort: whatever still runs when this process exits is killed with it, however it exits. Every process
 *  that spawns children calls this once before the first spawnChild. */
export function killChildrenOnExit() {
  if (exitHandlerInstalled) return
  exitHandlerInstalled = true
  process.on('exit', () => {
    for (const c of children) if (c.running()) killGroup(c.pid, 'SIGKILL')
  })
}

/** Runs `shutdown` once on SIGINT/SIGTERM/SIGHUP, then exits with its code; a second signal kills at once. */
export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => Promise<number>) {
  let received = false
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (received) process.exit(130)
      received = true
      shutdown(signal).then(
        (code) => process.exit(code),
        (err) => {
          console.error(err)
          process.exit(1)
        },
      )
    })
  }
}

export type Stoppable = { stop(): Promise<void> }

/** Stops the children in parallel; the caller decides the order by awaiting groups of calls. */
export const stopAll = (list: Iterable<Child | Stoppable | undefined>) => Promise.all([...list].map((c) => c?.stop().catch(() => {})))

/** Starts servers in parallel. Each one is added to `started` the moment it is up, so a shutdown signal during
 *  start-up stops it too; if any fails, the error names every failure. */
export async function startTogether<T extends Record<string, Promise<Stoppable>>>(starts: T, started: Stoppable[]): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const entries = Object.entries(starts)
  const results = await Promise.allSettled(
    entries.map(([, p]) =>
      p.then((server) => {
        started.push(server)
        return server
      }),
    ),
  )
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failures.length > 0) throw new Error(failures.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason))).join('\n'))
  return Object.fromEntries(entries.map(([name], i) => [name, (results[i] as PromiseFulfilledResult<Stoppable>).value])) as { [K in keyof T]: Awaited<T[K]> }
}

// A persistent data dir records its children, so a run whose supervisor was SIGKILLed does not leave
// servers holding the ports and the Postgres lock for the next run. A pid plus its start time (clock
// ticks since boot) names one process even after the pid is reused.
export interface ProcessId {
  pid: number
  started: string
}
interface PidRecord {
  owner: ProcessId
  children: (ProcessId & { name: string; stopSignal: NodeJS.Signals })[]
}

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
export const alive = (p: ProcessId) => {
  const f = stat(p.pid)
  return f !== undefined && f[0] !== 'Z' && f[19] === p.started
}

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
  try {
    prev = JSON.parse(readFileSync(file, 'utf8')) as PidRecord
  } catch {
    /* none, or torn: nothing to reap */
  }
  if (prev?.owner && prev.owner.pid !== process.pid) {
    if (alive(prev.owner)) throw new Error(`another ${what} (pid ${prev.owner.pid}) is already running on this data directory`)
    // Gracefully where possible: a SIGKILLed postmaster leaves backends holding its shared memory.
    const stale = prev.children.filter(alive)
    for (const c of stale) {
      try {
        process.kill(c.pid, c.stopSignal)
      } catch {
        /* gone meanwhile */
      }
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
    return text
      ? text
          .split('\n')
          .slice(-lines)
          .map((l) => `    | ${l}`)
          .join('\n')
      : `    (${file} is empty)`
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

/** A worker process (worker/main.ts) is serving once it logs its start line; bundling its workflows takes seconds on a
 *  quiet machine and minutes on a loaded one, so the default wait is long. */
export const workerStarted = (child: Child, timeoutMs = 300_000) =>
  waitUntil(child, 'its start', async () => readFileSync(child.logFile, 'utf8').includes('"msg":"worker started"'), timeoutMs)

/** A readiness probe for waitUntil: the URL answers 2xx within a second. */
export const httpOk = (url: string) => async () => (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok
