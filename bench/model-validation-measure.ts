// One model-version validation's reading in its own process, for bench/edge-package.ts: the validation activity's
// code (measureObject) run over the objects named in RCP_BENCH_OBJECTS (JSON: bucket and keys) against RCP_BENCH_S3
// (JSON region). Prints one JSON line: wall time, bytes read, and the process's peak resident set (VmHWM).
import { readFileSync } from 'node:fs'
import { measureObject } from '../activities/model-validation'
import { s3For } from '../api/storage/s3'

const { bucket, keys } = JSON.parse(process.env.RCP_BENCH_OBJECTS!) as { bucket: string; keys: string[] }
const s3 = s3For(JSON.parse(process.env.RCP_BENCH_S3!))
const t = performance.now()
let bytes = 0
for (const key of keys) bytes += (await measureObject(s3, bucket, key, () => {}))!.sizeBytes
const ms = performance.now() - t
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
console.log(JSON.stringify({ ms, bytes, peakRssMb: Number(hwm?.[1] ?? 0) / 1024 }))
