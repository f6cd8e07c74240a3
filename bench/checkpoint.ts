// A checkpoint for the package benchmarks, uploaded once to the bench's own MinIO and kept for later runs.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { s3For } from '../api/storage/s3'
import type { PlannedObject } from '../workflows/contract-edge-packages'

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
