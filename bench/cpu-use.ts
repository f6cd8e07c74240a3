// Where the CPU went during a bench phase: CPU seconds of every process on the machine (and of each thread of the
// processes named), from /proc, between two snapshots. A latency that misses under load is read against this.
import { readdirSync, readFileSync } from 'node:fs'

const TICKS_PER_SECOND = 100 // USER_HZ on Linux

type Ticks = Map<string, { label: string; ticks: number }>

/** utime + stime (fields 14 and 15) of a /proc stat line, and its comm (field 2). */
function readStat(path: string): { comm: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(path, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ticks: Number(fields[11]) + Number(fields[12]) }
  } catch {
    return undefined
  } // ended while listed
}

/** A process's label: its program name and first script argument ("bun.exe api/main.ts", "postgres"). The kernel's
 *  name, not argv[0], which Postgres backends and Chromium's helpers rewrite per process: one label for all of them. */
function labelOf(pid: string, comm: string): string {
  try {
    const script = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .slice(1)
      .find((a) => /\.(ts|js|py)$/.test(a))
    return script ? `${comm} ${script}` : comm
  } catch {
    return comm
  }
}

/** CPU seconds one process has used so far (all its threads); undefined once it has ended. */
export function cpuSecondsOf(pid: number): number | undefined {
  const s = readStat(`/proc/${pid}/stat`)
  return s && s.ticks / TICKS_PER_SECOND
}

export function cpuSnapshot(threadsOf: Record<string, number> = {}): Ticks {
  const out: Ticks = new Map()
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    const s = readStat(`/proc/${pid}/stat`)
    if (s) out.set(pid, { label: labelOf(pid, s.comm), ticks: s.ticks })
  }
  for (const [name, pid] of Object.entries(threadsOf)) {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const s = readStat(`/proc/${pid}/task/${tid}/stat`)
      if (s) out.set(`${pid}/${tid}`, { label: `${name} thread ${s.comm}`, ticks: s.ticks })
    }
  }
  return out
}

/** CPU seconds per label between two snapshots (processes of one label summed), largest first. */
export function cpuBetween(before: Ticks, after: Ticks): { label: string; cpuSeconds: number }[] {
  const byLabel = new Map<string, number>()
  for (const [key, { label, ticks }] of after) {
    const used = ticks - (before.get(key)?.ticks ?? 0)
    if (used > 0) byLabel.set(label, (byLabel.get(label) ?? 0) + used / TICKS_PER_SECOND)
  }
  return [...byLabel].map(([label, cpuSeconds]) => ({ label, cpuSeconds })).sort((a, b) => b.cpuSeconds - a.cpuSeconds)
}

/** CPU seconds a process and every process descended from it have used so far (the API and its hashing child). */
export function treeCpuSeconds(root: number): number {
  const parent = new Map<number, number>()
  const ticks = new Map<number, number>()
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parent.set(Number(pid), Number(fields[1]))
      ticks.set(Number(pid), Number(fields[11]) + Number(fields[12]))
    } catch {
      // ended while listed
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid, depth = 0; p !== undefined && p > 1 && depth < 64; p = parent.get(p), depth++) if (p === root) return true
    return false
  }
  let total = 0
  for (const [pid, t] of ticks) if (inTree(pid)) total += t
  return total / TICKS_PER_SECOND
}

/** Waits until a process tree is idle: a 100 ms stretch in which it used at most a tenth of a core (an idle API's
 *  timers use about 3%), or `maxMs` at most. A load generator stops with requests in flight and the server finishes
 *  them anyway; a sign-in's argon2id keeps the cores busy for up to a second after (32 verifications on two
 *  cores), and not in the order they arrived (Bun's thread pool is not first-come), so no single request queued
 *  behind them can wait them out. */
export async function settle(root: number, maxMs = 10_000): Promise<void> {
  const until = performance.now() + maxMs
  let last = treeCpuSeconds(root)
  while (performance.now() < until) {
    await Bun.sleep(100)
    const now = treeCpuSeconds(root)
    // /proc counts in clock ticks of 10 ms: at most one tick in the stretch is idle.
    if (Math.round((now - last) * TICKS_PER_SECOND) <= 1) return
    last = now
  }
}
