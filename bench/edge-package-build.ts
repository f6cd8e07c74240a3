// One package build in its own process, for bench/edge-package.ts: the archive activity's code (writeArchive) run on
// the plan given in RCP_BENCH_PLAN (JSON), against RCP_BENCH_S3 (JSON region). Prints one JSON line: wall time, the
// artifact, and the process's peak resident set (VmHWM), so memory is measured apart from the harness.
import { readFileSync } from 'node:fs'
import { writeArchive } from '../activities/edge-package/archive'
import { signingPrivateKey } from '../api/edge-packages/signing'
import { s3For } from '../api/storage/s3'
import type { EdgePackagePlan } from '../workflows/contract-edge-packages'

const plan: EdgePackagePlan = JSON.parse(process.env.RCP_BENCH_PLAN!)
const s3 = s3For(JSON.parse(process.env.RCP_BENCH_S3!))
const key = signingPrivateKey({ SECRET_KEY: process.env.SECRET_KEY!, PACKAGE_SIGNING_KEY: undefined, PACKAGE_SIGNING_PREVIOUS_PUBLIC_KEYS: '' })
const t = performance.now()
const artifact = await writeArchive({ s3, plan, signingKey: key, runtime: [], onProgress: () => {} })
const ms = performance.now() - t
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
console.log(JSON.stringify({ ms, ...artifact, peakRssMb: Number(hwm?.[1] ?? 0) / 1024 }))
