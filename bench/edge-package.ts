// Edge package build: `bun bench/edge-package.ts [--size 200MB]` plus the harness's flags (3 rounds by default; for a
// checkpoint of real size, `--size 5GB --rounds 1`). Builds a package from a checkpoint of --size (MB or GB, plus a
// small config) with the archive activity's code in its own process, and does the same work with standard tools in the
// same run: curl on presigned GETs from the same MinIO, GNU tar (sorted, mtime 0, owner 0) piped through gzip -6,
// sha256sum of every file, curl -T to a presigned PUT. Reports MB/s of each and their ratio (target: the build at most
// 1.5× the tools' wall time, i.e. ≥ 0.67 of their rate). Then the peak RSS of the build, and of the model-version
// validation's reading (bench/model-validation-measure.ts), from a 50 MB checkpoint and from the larger of --size and
// 500 MB (target: flat, under 50 MB apart), written to bench/results/edge-package-rss.json.
// Data stays outside the repository: MinIO's in ~/.cache/rcp/bench-minio (checkpoints made once and kept, the output
// archives removed at the end), the tools' files in the harness's scratch directory under the system's temp dir.
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { s3For } from '../api/storage/s3'
import { CACHE_DIR, freePort, newSecretKey, startMinio } from '../scripts/platform'
import type { PlannedObject } from '../workflows/contract-edge-packages'
import { benchmark, RESULTS, ROOT } from './harness'
import { benchPackagePlan, ensureCheckpoint, sizeMb } from './checkpoint'

const BUCKET = 'rcp-bench-edge-package'
const PACKAGE_ID = '00000000-0000-4000-8000-000000000000'
const MB = 1024 * 1024
const TOOLS = 'curl + GNU tar | gzip -6 + sha256sum + curl -T'
const say = (msg: string) => console.error(`[bench] ${msg}`)

await benchmark('edge-package', { size: { type: 'string' } }, async (h) => {
  const mb = sizeMb(h.flags.size as string | undefined, '200MB')
  const minioDir = join(CACHE_DIR, 'bench-minio')
  const minio = await startMinio({ dataDir: minioDir, port: await freePort(), consolePort: await freePort(), logFile: join(minioDir, 'minio.log') })
  h.own(minio)
  const region = { id: 'bench', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey }
  const s3 = s3For(region)
  if (!(await s3.bucketExists(BUCKET))) await s3.makeBucket(BUCKET)
  // Stopped before MinIO: the output archives go (as large as the checkpoint, each), the checkpoints stay for next time.
  h.own({
    stop: () =>
      s3.removeObjects(BUCKET, ['out/ours.tar.gz', 'out/tools.tar.gz']).then(
        () => {},
        () => {},
      ),
  })
  const secret = newSecretKey()

  const ours = (objects: PlannedObject[]) => {
    const out = execFileSync(process.execPath, [join(ROOT, 'bench/edge-package-build.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {
        ...process.env,
        SECRET_KEY: secret,
        RCP_BENCH_S3: JSON.stringify(region),
        RCP_BENCH_PLAN: JSON.stringify(benchPackagePlan(objects, { id: PACKAGE_ID, bucket: BUCKET, artifactKey: 'out/ours.tar.gz' })),
      },
    })
    return JSON.parse(out.trim().split('\n').at(-1)!) as { ms: number; sizeBytes: number; sha256: string; peakRssMb: number }
  }

  const work = join(h.scratch, 'tools')
  const tools = async (objects: PlannedObject[]) => {
    rmSync(work, { recursive: true, force: true })
    mkdirSync(join(work, 'pkg/model'), { recursive: true })
    const gets = await Promise.all(objects.map((o) => s3.presignedGetObject(BUCKET, o.key, 3600)))
    const put = await s3.presignedPutObject(BUCKET, 'out/tools.tar.gz', 3600)
    writeFileSync(join(work, 'urls'), objects.map((o, i) => `url = "${gets[i]}"\noutput = "pkg/model/${o.path}"\n`).join(''))
    const script = [
      'set -euo pipefail',
      `cd ${work}`,
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

  const checkpoint = await ensureCheckpoint(s3, BUCKET, mb)
  const bytes = checkpoint.reduce((n, o) => n + o.sizeBytes, 0)
  const rate = (ms: number) => ({ rate: bytes / MB / (ms / 1000) })

  // Memory: one build and one validation each from a small and a large checkpoint, each in a fresh process.
  const validation = (objects: PlannedObject[]) => {
    const out = execFileSync(process.execPath, [join(ROOT, 'bench/model-validation-measure.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, RCP_BENCH_S3: JSON.stringify(region), RCP_BENCH_OBJECTS: JSON.stringify({ bucket: BUCKET, keys: objects.map((o) => o.key) }) },
    })
    return JSON.parse(out.trim().split('\n').at(-1)!) as { ms: number; bytes: number; peakRssMb: number }
  }
  const rss: Record<string, number> = {}
  const validationRss: Record<string, number> = {}
  const large = Math.max(mb, 500)
  for (const size of [50, large]) {
    const objects = await ensureCheckpoint(s3, BUCKET, size)
    const r = ours(objects)
    rss[`${size} MB`] = Math.round(r.peakRssMb)
    say(`peak RSS building from ${size} MB: ${r.peakRssMb.toFixed(0)} MB (${(r.ms / 1000).toFixed(1)} s, ${(size / (r.ms / 1000)).toFixed(1)} MB/s)`)
    const v = validation(objects)
    validationRss[`${size} MB`] = Math.round(v.peakRssMb)
    say(`peak RSS validating ${size} MB: ${v.peakRssMb.toFixed(0)} MB (${(v.ms / 1000).toFixed(1)} s, ${(v.bytes / MB / (v.ms / 1000)).toFixed(1)} MB/s)`)
  }
  const flat = rss[`${large} MB`]! - rss['50 MB']!
  const validationFlat = validationRss[`${large} MB`]! - validationRss['50 MB']!
  say(
    `peak RSS difference ${large} MB vs 50 MB: build ${flat} MB, validation ${validationFlat} MB (target < 50 MB: ${flat < 50 ? 'PASS' : 'MISS'}, ${validationFlat < 50 ? 'PASS' : 'MISS'})`,
  )
  writeFileSync(
    join(RESULTS, 'edge-package-rss.json'),
    `${JSON.stringify(
      {
        peakRssMb: rss,
        differenceMb: flat,
        validation: { peakRssMb: validationRss, differenceMb: validationFlat },
        target: '< 50 MB',
      },
      null,
      2,
    )}\n`,
  )

  return {
    baselines: [{ name: TOOLS, run: async () => rate(await tools(checkpoint)) }],
    rows: [{ name: `package build (${mb} MB checkpoint)`, run: async () => rate(ours(checkpoint).ms), target: 1 / 1.5, targetOf: TOOLS }],
    rounds: h.settings.rounds || 3,
  }
})
