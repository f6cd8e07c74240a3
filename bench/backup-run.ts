// One backup of the database half (backupDatabase of scripts/backup.ts) in its own process, for bench/backup.ts:
// RCP_BENCH_DB into RCP_BENCH_DIR. Prints one JSON line: wall time, bytes written, and the process's peak resident
// set (VmHWM), so memory is measured apart from the harness.
import { readFileSync } from 'node:fs'
import { backupDatabase } from '../scripts/backup'

const t = performance.now()
const { bytes, tables } = await backupDatabase(process.env.RCP_BENCH_DB!, process.env.RCP_BENCH_DIR!)
const ms = performance.now() - t
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
console.log(JSON.stringify({ ms, bytes, tables: tables.length, peakRssMb: Number(hwm?.[1] ?? 0) / 1024 }))
