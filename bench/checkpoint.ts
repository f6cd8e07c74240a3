// What the package benchmarks build from: a checkpoint uploaded once to the bench's own MinIO and kept for later runs,
// and the plan the archive activity takes for it.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { s3For } from '../api/storage/s3'
import type { EdgePackagePlan, PlannedObject } from '../workflows/contract-edge-packages'

const MB = 1024 * 1024

/** 1 MiB of hash output repeated: incompressible to gzip's 32 KiB window, like real weights. */
const chunk = Buffer.concat(Array.from({ length: MB / 32 }, (_, i) => createHash('sha256').update(`bench/${i}`).digest()))

/** `ckpt-<mb>/model.safetensors` (mb MiB) and a config.json in `bucket`, uploaded only when missing, as a plan's objects. */
export async function ensureCheckpoint(s3: ReturnType<typeof s3For>, bucket: string, mb: number): Promise<PlannedObject[]> {
  const objects = [
    { key: `ckpt-${mb}/model.safetensors`, size: mb * MB },
    { key: `ckpt-${mb}/config.json`, size: 2 },
  ]
  for (const o of objects) {
    const present = await s3.statObject(bucket, o.key).then(
      (s) => s.size === o.size,
      () => false,
    )
    if (present) continue
    console.error(`[bench] uploading ${o.key} (kept for later runs)`)
    const body =
      o.size === 2
        ? Buffer.from('{}')
        : Readable.from(
            (function* () {
              for (let i = 0; i < mb; i++) yield chunk
            })(),
          )
    await s3.putObject(bucket, o.key, body, o.size)
  }
  return objects.map((o) => ({ key: o.key, path: o.key.split('/')[1]!, sizeBytes: o.size, sha256: null }))
}

/** `--size`: 200MB, 5GB, 1.5GB or a bare number of MB; answered in whole MiB. */
export function sizeMb(flag: string | undefined, fallback: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(MB|M|GB|G)?$/i.exec(flag ?? fallback)
  if (!m) throw new Error(`--size ${flag}: a size such as 200MB or 5GB`)
  return Math.round(Number(m[1]) * (/^g/i.test(m[2] ?? '') ? 1024 : 1))
}

/** The archive activity's plan for a local cpu package of these objects, read from and written to `bucket`. */
export function benchPackagePlan(objects: PlannedObject[], o: { id: string; bucket: string; artifactKey: string }): EdgePackagePlan {
  const { id } = o
  return {
    tenantId: id,
    packageId: id,
    workflowId: `edge-package/${id}/cpu/${id}`,
    regionId: 'bench',
    sourceBucket: o.bucket,
    objects,
    artifactBucket: o.bucket,
    artifactKey: o.artifactKey,
    request: { mode: 'local' },
    gzipLevel: 6,
    manifest: {
      schema: 'rcp.edge-package/v1',
      packageId: id,
      modelVersion: { id, name: 'bench', format: 'onnx', source: { kind: 'imported_checkpoint', path: objects[0]!.key } },
      embodiment: { id, name: 'arm', robotType: 'so100', controlRateHz: 30, observationFeatures: [], actionFeatures: [] },
      mode: 'local',
      targetArch: 'cpu',
      baseImage: 'python:3.11-slim-bookworm',
      platform: 'linux/amd64',
      wireProtocols: [{ name: 'openpi-ws', port: 8000 }],
      remotePolicy: null,
      steps: 10,
      strategyKey: null,
      useFakeTransport: true,
      modelFiles: objects.map((o) => o.path),
      apiBase: 'http://127.0.0.1:3000',
    },
  }
}
