// The fault drill of ./scripts/up: the real script runs as a process on a data dir and ports of this file's own, and
// one server of the platform is SIGKILLed, each in turn (Postgres, Temporal, MinIO, the worker, the API). up names
// it at once and stops the whole platform: its own process exits non-zero, every child it recorded in its pid file
// is gone with everything in their process groups (Postgres backends, say), the pid file is removed and every port
// is free again: never a half-running platform.
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive, API_AUTOGROUP_NICE, CACHE_DIR, freePort, REPO_ROOT, spawnChild, type Child, type ProcessId } from '../../scripts/platform'

const VICTIMS = ['postgres', 'temporal', 'minio', 'worker', 'api'] as const

const dataDir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'up-drill-'))
chmodSync(dataDir, 0o711) // Postgres runs as its own user and must be able to enter its subdirectory
const pidFile = join(dataDir, 'run', 'pids.json')

const PORT_ENV = [
  'PORT',
  'RCP_POSTGRES_PORT',
  'RCP_TEMPORAL_PORT',
  'RCP_TEMPORAL_UI_PORT',
  'RCP_TEMPORAL_HTTP_PORT',
  'RCP_MINIO_PORT',
  'RCP_MINIO_CONSOLE_PORT',
  'RCP_SMTP_PORT',
  'RCP_MAIL_HTTP_PORT',
  'METRICS_PORT',
  'WORKER_METRICS_PORT',
  'TEMPORAL_METRICS_PORT',
]
const ports: Record<string, string> = {}
for (const name of PORT_ENV) ports[name] = String(await freePort())

/** Only what a developer's shell would hold: none of the runner's DATABASE_URL, TEMPORAL_*, S3_* or SMTP_URL, which
 *  would point up at the suite's servers. */
const env: Record<string, string> = {
  ...Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : []))),
  RCP_CACHE_DIR: process.env.RCP_CACHE_DIR ?? CACHE_DIR,
  RCP_DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  ...ports,
}

const everSeen = new Set<number>()

/** Live processes (not zombies) in any of these process groups. */
function inGroups(groups: number[]): string[] {
  const ps = Bun.spawnSync(['ps', '-eo', 'pid=,pgid=,stat=,args=']).stdout.toString()
  return ps
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 3 && groups.includes(Number(f[1])) && !f[2]!.startsWith('Z'))
    .map((f) => f.join(' ').slice(0, 160))
}
const portFree = async (port: number) => {
  try {
    const s = Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } })
    s.stop(true)
    return true
  } catch {
    return false
  }
}

afterAll(() => {
  // Only if a drill failed: whatever it left behind goes with the test.
  for (const pid of everSeen)
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      /* gone */
    }
})

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, up: Child, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; up's log:\n${readFileSync(up.logFile, 'utf8').slice(-4000)}`)
    await Bun.sleep(20)
  }
}

describe('./scripts/up when a server of the platform dies', () => {
  test('it is named at once and the platform stops cleanly: every child and its group gone, pid file removed, ports free', async () => {
    const figures: string[] = []
    for (const [i, victim] of VICTIMS.entries()) {
      const up = spawnChild('scripts/up', { cmd: [process.execPath, 'scripts/up.ts'], cwd: REPO_ROOT, env, logFile: join(dataDir, `up-${i}-${victim}.log`) })
      const log = () => readFileSync(up.logFile, 'utf8')
      await waitFor('the platform to be up', () => (log().includes('Robot Control Plane is up') ? true : undefined), up, 180_000)
      const children = (JSON.parse(readFileSync(pidFile, 'utf8')) as { children: (ProcessId & { name: string })[] }).children
      for (const c of children) everSeen.add(c.pid)
      expect(children.map((c) => c.name).sort()).toEqual(['api', 'minio', 'postgres', 'temporal', 'worker'])
      expect(children.every(alive)).toBe(true)
      // The API's session weighs more than the others' (scripts/supervisor.ts, API_AUTOGROUP_NICE); nothing else moves.
      // An ordinary user may not raise a priority (CAP_SYS_NICE): up says so and the API keeps the default.
      const autogroup = (name: string) => readFileSync(`/proc/${children.find((c) => c.name === name)!.pid}/autogroup`, 'utf8').trim()
      if (process.getuid?.() === 0) {
        expect(log()).toContain(`[up] the API's CPU weight: autogroup niceness ${API_AUTOGROUP_NICE}`)
        expect(autogroup('api')).toEndWith(`nice ${API_AUTOGROUP_NICE}`)
      } else {
        expect(log()).toContain('[up] the API runs at the default CPU weight (')
        expect(autogroup('api')).toEndWith('nice 0')
      }
      for (const other of ['postgres', 'temporal', 'minio', 'worker']) expect(autogroup(other)).toEndWith('nice 0')

      const target = children.find((c) => c.name === victim)!
      process.kill(target.pid, 'SIGKILL')
      const killedAt = performance.now()
      const report = await waitFor(
        `up to name ${victim}`,
        () =>
          log()
            .split('\n')
            .find((l) => l.includes('exited unexpectedly')),
        up,
      )
      const reportedMs = performance.now() - killedAt
      const code = await up.exited
      const stoppedMs = performance.now() - killedAt

      expect(report).toStartWith(`[up] ${victim} exited unexpectedly`)
      expect(code).toBe(1)
      expect(children.filter(alive).map((c) => c.name)).toEqual([])
      expect(inGroups(children.map((c) => c.pid))).toEqual([])
      expect(existsSync(pidFile)).toBe(false)
      const busy = []
      for (const name of PORT_ENV) if (!(await portFree(Number(ports[name])))) busy.push(name)
      expect(busy).toEqual([])
      figures.push(`${victim}: named in ${Math.round(reportedMs)} ms, all stopped in ${(stoppedMs / 1000).toFixed(1)} s`)
    }
    console.error(`[drill] ./scripts/up, one server SIGKILLed per run: ${figures.join('; ')}`)
  }, 900_000)
})
