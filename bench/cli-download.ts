// `rcp packages download --verify` against the same download and checks done by hand: `bun bench/cli-download.ts
// [--size 500MB]` plus the harness's flags (3 paired rounds by default). The package is built once, as the build
// writes it, by the archive activity's code (bench/edge-package-build.ts: a --size checkpoint plus a small config, the
// manifest, the signed DSSE provenance and SHA256SUMS) into a MinIO of the bench's own; its two metadata reads (the
// package with a fresh presigned GET, and the published signing keys, as the API answers them) come from a stand-in
// of those two routes in the bench process, so both sides download the same bytes from the same MinIO and the
// comparison is the client's work alone. By hand is docs/robots.md's block: curl (the package, the archive, the keys),
// sha256sum of the archive, tar -xzf, sha256sum -c SHA256SUMS, jq and openssl pkeyutl -verify over the DSSE PAE.
// Reports MB/s of each (archive bytes) and their paired ratio; target: rcp ≥ 80% of by hand.
// Data stays outside the repository: MinIO's in ~/.cache/rcp/bench-minio-cli (the checkpoint kept for later runs, the
// archive removed at the end), the downloads in the harness's scratch directory.
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { publicSigningKeys } from '../api/edge-packages/signing'
import { s3For } from '../api/storage/s3'
import { CACHE_DIR, freePort, newSecretKey, startMinio } from '../scripts/platform'
import { benchmark, ROOT } from './harness'
import { benchPackagePlan, ensureCheckpoint, sizeMb } from './checkpoint'

const BUCKET = 'rcp-bench-cli-download'
const ARTIFACT = 'out/package.tar.gz'
const PACKAGE_ID = '00000000-0000-4000-8000-000000000039'
const MB = 1024 * 1024
const BY_HAND = 'by hand: curl + sha256sum + tar -xzf + sha256sum -c + openssl'
const say = (msg: string) => console.error(`[bench] ${msg}`)

await benchmark('cli-download', { size: { type: 'string' } }, async (h) => {
  const mb = sizeMb(h.flags.size as string | undefined, '500MB')
  const minioDir = join(CACHE_DIR, 'bench-minio-cli')
  mkdirSync(minioDir, { recursive: true })
  const minio = await startMinio({ dataDir: minioDir, port: await freePort(), consolePort: await freePort(), logFile: join(minioDir, 'minio.log') })
  h.own(minio)
  const region = { id: 'bench', endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey }
  const s3 = s3For(region)
  if (!(await s3.bucketExists(BUCKET))) await s3.makeBucket(BUCKET)
  h.own({ stop: () => s3.removeObject(BUCKET, ARTIFACT).catch(() => {}) })

  // The checkpoint (kept), then the package built from it with the archive activity's code.
  const planned = await ensureCheckpoint(s3, BUCKET, mb)
  const secret = newSecretKey()
  say('building the package with the archive activity')
  const built = JSON.parse(
    execFileSync(process.execPath, [join(ROOT, 'bench/edge-package-build.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {
        ...process.env,
        SECRET_KEY: secret,
        RCP_BENCH_S3: JSON.stringify(region),
        RCP_BENCH_PLAN: JSON.stringify(benchPackagePlan(planned, { id: PACKAGE_ID, bucket: BUCKET, artifactKey: ARTIFACT })),
      },
    })
      .trim()
      .split('\n')
      .at(-1)!,
  ) as { sizeBytes: number; sha256: string }
  say(`package: ${(built.sizeBytes / MB).toFixed(1)} MiB`)

  // The stand-in of the API's two reads, answering as the API does (a fresh presigned GET on every read).
  const keys = publicSigningKeys({ SECRET_KEY: secret, PACKAGE_SIGNING_KEY: undefined, PACKAGE_SIGNING_PREVIOUS_PUBLIC_KEYS: '' })
  const api = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      const path = new URL(req.url).pathname
      if (path === '/v1/edge-inference-packages/signing-keys') return Response.json({ data: keys, meta: { requestId: 'bench' } })
      if (path === `/v1/edge-inference-packages/${PACKAGE_ID}`) {
        const downloadUrl = await s3.presignedGetObject(BUCKET, ARTIFACT, 900)
        return Response.json({
          data: {
            id: PACKAGE_ID,
            status: 'ready',
            failureReason: null,
            artifact: {
              bucket: BUCKET,
              key: ARTIFACT,
              sizeBytes: built.sizeBytes,
              sha256: built.sha256,
              downloadUrl,
              downloadUrlExpiresAt: new Date(Date.now() + 900_000).toISOString(),
            },
          },
          meta: { requestId: 'bench' },
        })
      }
      return Response.json({ code: 'NOT_FOUND' }, { status: 404 })
    },
  })
  h.own({ stop: async () => void api.stop(true) })
  const apiUrl = `http://127.0.0.1:${api.port}`

  // rcp, compiled as it ships, signed in by its config file (the stand-in has no token to check).
  const home = join(h.scratch, 'home')
  const bin = join(h.scratch, 'rcp')
  execFileSync(process.execPath, ['build', '--compile', 'clients/cli/main.ts', '--outfile', bin], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  mkdirSync(join(home, '.config', 'rcp'), { recursive: true, mode: 0o700 })
  writeFileSync(
    join(home, '.config', 'rcp', 'config.json'),
    JSON.stringify({
      apiUrl,
      current: PACKAGE_ID,
      credentials: [
        { tenantId: PACKAGE_ID, tenantSlug: 'bench', token: 'rcp_pat_bench', credentialClass: 'personal_access_token', expiresAt: '2099-01-01T00:00:00Z' },
      ],
    }),
  )
  chmodSync(join(home, '.config', 'rcp', 'config.json'), 0o600)

  const work = join(h.scratch, 'work')
  const fresh = () => {
    rmSync(work, { recursive: true, force: true })
    mkdirSync(work)
  }
  const byHand = [
    'set -euo pipefail',
    'PKG=$(curl -fsS "$API/v1/edge-inference-packages/$ID" -H "Authorization: Bearer $PAT")',
    'URL=$(jq -r .data.artifact.downloadUrl <<<"$PKG")',
    'curl -fsS -C - -o pkg.tar.gz "$URL"',
    'echo "$(jq -r .data.artifact.sha256 <<<"$PKG")  pkg.tar.gz" | sha256sum --strict -c >/dev/null',
    'mkdir pkg && tar -xzf pkg.tar.gz -C pkg && cd pkg',
    'sha256sum --strict -c SHA256SUMS >/dev/null',
    'curl -fsS "$API/v1/edge-inference-packages/signing-keys" | jq -r \'.data[0].publicKeyPem\' > ../pub.pem',
    'T=$(jq -r .payloadType provenance.intoto.jsonl); jq -r .payload provenance.intoto.jsonl | base64 -d > ../payload.json',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    '{ printf \'DSSEv1 %d %s %d \' "${#T}" "$T" "$(stat -c %s ../payload.json)"; cat ../payload.json; } > ../pae.bin',
    "jq -r '.signatures[0].sig' provenance.intoto.jsonl | base64 -d > ../sig.bin",
    'openssl pkeyutl -verify -pubin -inkey ../pub.pem -rawin -in ../pae.bin -sigfile ../sig.bin >/dev/null',
  ].join('\n')
  const rate = (ms: number) => ({ rate: built.sizeBytes / MB / (ms / 1000), p50Ms: ms })
  /** Spawned without blocking: the stand-in API answers from this process. */
  const run = async (cmd: string[], env: Record<string, string>) => {
    const proc = Bun.spawn(cmd, { cwd: work, env: { PATH: process.env.PATH!, ...env }, stdout: 'ignore', stderr: 'pipe' })
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
    if (code !== 0) throw new Error(`${cmd[0]} exited ${code}: ${stderr}`)
  }
  const hand = async () => {
    fresh()
    const t = performance.now()
    await run(['bash', '-c', byHand], { API: apiUrl, ID: PACKAGE_ID, PAT: 'rcp_pat_bench' })
    return rate(performance.now() - t)
  }
  const rcp = async () => {
    fresh()
    const t = performance.now()
    await run([bin, 'packages', 'download', PACKAGE_ID, '--verify', '--output', 'pkg.tar.gz'], { HOME: home })
    return rate(performance.now() - t)
  }
  // Both once, untimed: page cache, MinIO's own warm-up, and a check that each side passes.
  await hand()
  await rcp()
  return {
    baselines: [{ name: BY_HAND, run: hand }],
    rows: [{ name: `rcp packages download --verify (${(built.sizeBytes / MB).toFixed(0)} MiB package)`, run: rcp, target: 0.8, targetOf: BY_HAND }],
    rounds: h.settings.rounds || 3,
    paired: true,
  }
})
