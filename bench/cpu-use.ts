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
