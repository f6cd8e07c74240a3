// One backup of the database half (backupDatabase of scripts/backup.ts) in its own process, for bench/backup.ts:
// RCP_BENCH_DB into RCP_BENCH_DIR, on RCP_BENCH_JOBS connections (unset: the default). Prints one JSON line: wall time, bytes written, and the process's peak resident
// set (VmHWM) and CPU time, so memory and the client's own work are measured apart from the harness.
import { readFileSync } from 'node:fs'
import { backupDatabase, defaultJobs } from '../scripts/backup'
import { DEFAULT_STALL_MS } from '../scripts/backup-queries'

const t = performance.now()
const jobs = Number(process.env.RCP_BENCH_JOBS || defaultJobs())
const { bytes, tables } = await backupDatabase(process.env.RCP_BENCH_DB!, process.env.RCP_BENCH_DIR!, { stallMs: DEFAULT_STALL_MS }, jobs)
const ms = performance.now() - t
const cpu = process.cpuUsage()
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
console.log(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, bytes, jobs, tables: tables.length, peakRssMb: Number(hwm?.[1] ?? 0) / 1024 }))
