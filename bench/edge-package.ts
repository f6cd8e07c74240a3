// Edge package build: `bun bench/edge-package.ts [--mb 200]` plus the harness's flags (3 rounds by default).
// Builds a package from a --mb MB checkpoint (plus a small config) with the archive activity's code in its own process,
// and does the same work with standard tools in the same run: curl on presigned GETs from the same MinIO, GNU tar
// (sorted, mtime 0, owner 0) piped through gzip -6, sha256sum of every file, curl -T to a presigned PUT. Reports MB/s of
// each and their ratio (target: the build at most 1.5× the tools' wall time, i.e. ≥ 0.67 of their rate). Then the
// build's peak RSS from a 50 MB and a 500 MB checkpoint (target: flat, under 50 MB apart), written to
// bench/results/edge-package-rss.json. MinIO data lives in ~/.cache/rcp/bench-minio, so objects are made once.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { s3For } from '../api/storage/s3'
import { CACHE_DIR, freePort, newSecretKey, startMinio } from '../scripts/platform'
import type { EdgePackagePlan, PlannedObject } from '../workflows/contract-edge-packages'
import { benchmark, RESULTS, ROOT } from './harness'

const BUCKET = 'rcp-bench-edge-package'
const MB = 1024 * 1024
const TOOLS = 'curl + GNU tar | gzip -6 + sha256sum + curl -T'
const say = (msg: string) => console.error(`[bench] ${msg}`)

/** 1 MiB of hash output repeated: incompressible to gzip's 32 KiB window, like real weights. */
const chunk = Buffer.concat(Array.from({ length: MB / 32 }, (_, i) => createHash('sha256').update(`bench/${i}`).digest()))

async function ensureCheckpoint(s3: ReturnType<typeof s3For>, mb: number): Promise<PlannedObject[]> {
  const objects = [{ key: `ckpt-${mb}/model.safetensors`, size: mb * MB }, { key: `ckpt-${mb}/config.json`, size: 2 }]
  for (const o of objects) {
    const present = await s3.statObject(BUCKET, o.key).then((s) => s.size === o.size, () => false)
    if (present) continue
    say(`uploading ${o.key} (kept for later runs)`)
    const body = o.size === 2 ? Buffer.from('{}') : Readable.from((function* () { for (let i = 0; i < mb; i++) yield chunk })())
    await s3.putObject(BUCKET, o.key, body, o.size)
  }
  return objects.map((o) => ({ key: o.key, path: o.key.split('/')[1]!, sizeBytes: o.size, sha256: null }))
}

function planFor(objects: PlannedObject[], artifactKey: string): EdgePackagePlan {
  const id = '00000000-0000-4000-8000-000000000000'
  return {
    tenantId: id, packageId: id, workflowId: `edge-package/${id}/cpu/${id}`, regionId: 'bench', sourceBucket: BUCKET, objects,
    artifactBucket: BUCKET, artifactKey, request: { mode: 'local' }, gzipLevel: 6,
    manifest: {
      schema: 'rcp.edge-package/v1', packageId: id, modelVersion: { id, name: 'bench', format: 'onnx', source: { kind: 'imported_checkpoint', path: objects[0]!.key } },
      embodiment: { id, name: 'arm', robotType: 'so100', controlRateHz: 30, observationFeatures: [], actionFeatures: [] },
      mode: 'local', targetArch: 'cpu', baseImage: 'python:3.11-slim-bookworm', platform: 'linux/amd64', wireProtocols: [{ name: 'openpi-ws', port: 8000 }],
      remotePolicy: null, steps: 10, strategyKey: null, useFakeTransport: true, modelFiles: objects.map((o) => o.path), apiBase: 'http://127.0.0.1:3000',
    },
  }
}

await benchmark('edge-package', { mb: { type: 'string' } }, async (h) => {
  const mb = Number(h.flags.mb ?? 200)
  const minioDir = join(CACHE_DIR, 'bench-minio')
  const minio = await startMinio({ dataDir: minioDir, port: await freePort(), consolePort: await freePort(), logFile: join(minioDir, 'minio.log') })
  h.own(minio)
  const region = { id: 'bench', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey }
  const s3 = s3For(region)
  if (!(await s3.bucketExists(BUCKET))) await s3.makeBucket(BUCKET)
  const secret = newSecretKey()

  const ours = (objects: PlannedObject[]) => {
    const out = execFileSync(process.execPath, [join(ROOT, 'bench/edge-package-build.ts')], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, SECRET_KEY: secret, RCP_BENCH_S3: JSON.stringify(region), RCP_BENCH_PLAN: JSON.stringify(planFor(objects, `out/ours-${objects[0]!.sizeBytes}.tar.gz`)) },
    })
    return JSON.parse(out.trim().split('\n').at(-1)!) as { ms: number; sizeBytes: number; sha256: string; peakRssMb: number }
  }

  const work = join(h.scratch, 'tools')
  const tools = async (objects: PlannedObject[]) => {
    rmSync(work, { recursive: true, force: true })
    mkdirSync(join(work, 'pkg/model'), { recursive: true })
    const gets = await Promise.all(objects.map((o) => s3.presignedGetObject(BUCKET, o.key, 600)))
    const put = await s3.presignedPutObject(BUCKET, `out/tools-${objects[0]!.sizeBytes}.tar.gz`, 600)
    writeFileSync(join(work, 'urls'), objects.map((o, i) => `url = "${gets[i]}"\noutput = "pkg/model/${o.path}"\n`).join(''))
    const script = [
      'set -euo pipefail', `cd ${work}`,
      'curl --no-progress-meter -Sf --parallel --config urls',
      'cd pkg && printf "{}\\n" > manifest.json && find . -type f ! -name SHA256SUMS | sed "s|^./||" | sort | xargs sha256sum > SHA256SUMS && cd ..',
      'tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C pkg -cf - . | gzip -6 -n > pkg.tar.gz',
      'sha256sum pkg.tar.gz > /dev/null',
      `curl --no-progress-meter -Sf -T pkg.tar.gz "${put}" -o /dev/null`,
    ].join('\n')
    const t = performance.now()
    execFileSync('bash', ['-c', script], { stdio: ['ignore', 'ignore', 'inherit'] })
    return performance.now() - t
  }

  const checkpoint = await ensureCheckpoint(s3, mb)
  const bytes = checkpoint.reduce((n, o) => n + o.sizeBytes, 0)
  const rate = (ms: number) => ({ rate: bytes / MB / (ms / 1000) })

  // Memory: one build each from a small and a large checkpoint, each in a fresh process.
  const rss: Record<string, number> = {}
  for (const size of [50, 500]) {
    const r = ours(await ensureCheckpoint(s3, size))
    rss[`${size} MB`] = Math.round(r.peakRssMb)
    say(`peak RSS building from ${size} MB: ${r.peakRssMb.toFixed(0)} MB (${(r.ms / 1000).toFixed(1)} s)`)
  }
  const flat = rss['500 MB']! - rss['50 MB']!
  say(`peak RSS difference 500 MB vs 50 MB: ${flat} MB (target < 50 MB: ${flat < 50 ? 'PASS' : 'MISS'})`)
  writeFileSync(join(RESULTS, 'edge-package-rss.json'), `${JSON.stringify({ peakRssMb: rss, differenceMb: flat, target: '< 50 MB' }, null, 2)}\n`)

  return {
    baselines: [{ name: TOOLS, run: async () => rate(await tools(checkpoint)) }],
    rows: [{ name: `package build (${mb} MB checkpoint)`, run: async () => rate(ours(checkpoint).ms), target: 1 / 1.5, targetOf: TOOLS }],
    rounds: h.settings.rounds || 3,
  }
})
