// Writes a package as a deterministic tar.gz straight into its S3 object: model objects stream from storage through
// the tar entry (its size known up front), gzip, a SHA-256 tee and a multipart upload; nothing holds a file whole.
// Determinism: entries in a fixed order (manifest.json first, so a reader streaming the archive can check it before
// the model arrives; the other content files sorted by path; then the provenance, then SHA256SUMS, which are computed
// from the bytes before them), mtime 0, uid/gid 0, uname/gname root, modes from the plan, and a gzip
// header without a timestamp (Node's zlib writes mtime 0). Ed25519 signatures are deterministic too.
import { createHash, type KeyObject } from 'node:crypto'
import { once } from 'node:events'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'
import { ApplicationFailure } from '@temporalio/activity'
import type { Client as S3Client } from 'minio'
import { isMissingObject } from '../../api/storage/s3'
import tar from 'tar-stream'
import { EdgePackageErrorType, type EdgePackageArtifact, type EdgePackagePlan, type PlannedObject } from '../../workflows/contract-edge-packages'
import { MultipartSink } from './multipart'
import { provenanceLine, PROVENANCE_PATH, sha256sums, SUMS_PATH, type FileDigest } from './provenance'

export interface PackFile {
  path: string
  content: Buffer
  mode: number
}

type Entry = PackFile | { path: string; object: PlannedObject; mode: number }

/** One ranged GET of a model object: what a stalled reader can have buffered at most. */
const RANGE_BYTES = 8 * 1024 * 1024

const FIXED = { mtime: new Date(0), uid: 0, gid: 0, uname: 'root', gname: 'root' } as const

/** Passes bytes through, counting them and hashing them (SHA-256) on the way. */
export class Counter extends Transform {
  readonly hash = createHash('sha256')
  bytes = 0
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    this.hash.update(chunk)
    this.bytes += chunk.length
    done()
    this.push(chunk)
  }
}

const sourceChanged = (message: string) => ApplicationFailure.create({ type: EdgePackageErrorType.sourceChanged, message, nonRetryable: true })

function addBuffer(pack: tar.Pack, path: string, content: Buffer, mode: number): Promise<void> {
  return new Promise((resolve, reject) => pack.entry({ ...FIXED, name: path, mode, size: content.length }, content, (err) => (err ? reject(err) : resolve())))
}

/** Streams one object into its entry; answers its SHA-256. `onBytes` sees every chunk read. */
async function addObject(pack: tar.Pack, s3: S3Client, bucket: string, path: string, o: PlannedObject, onBytes: (n: number) => void): Promise<string> {
  const stat = await s3.statObject(bucket, o.key).catch((err) => {
    if (isMissingObject(err)) throw sourceChanged(`Model object ${o.key} is gone`)
    throw err
  })
  if (stat.size !== o.sizeBytes) throw sourceChanged(`Model object ${o.key} is ${stat.size} bytes, validated at ${o.sizeBytes}`)
  const hash = createHash('sha256')
  const done = new Promise<void>((resolve, reject) => {
    const entry = pack.entry({ ...FIXED, name: path, mode: 0o644, size: o.sizeBytes }, (err) => (err ? reject(err) : resolve()))
    // A pack destroyed mid-entry (the upload failed: storage went away) destroys the entry with an 'error' event;
    // unheard, that event is an uncaught exception that ends the worker process.
    entry.on('error', reject)
    void (async () => {
      // Read in ranges of RANGE_BYTES, one after another: Bun's HTTP client keeps reading a response while its reader
      // waits (for gzip, or for a part's upload), so one GET of the whole object buffered whatever storage sent in
      // each wait, and the build's peak RSS grew with the checkpoint and the machine's load. A range bounds it.
      for (let offset = 0; offset < o.sizeBytes; offset += RANGE_BYTES) {
        const body: Readable = await s3.getPartialObject(bucket, o.key, offset, Math.min(RANGE_BYTES, o.sizeBytes - offset))
        for await (const chunk of body) {
          hash.update(chunk)
          onBytes(chunk.length)
          if (!entry.write(chunk)) await once(entry as never, 'drain')
        }
      }
      entry.end(undefined as never)
    })().catch((err) => {
      entry.destroy(err)
      reject(err)
    })
  })
  await done
  const digest = hash.digest('hex')
  if (o.sha256 && o.sha256 !== digest) throw sourceChanged(`Model object ${o.key} no longer has the SHA-256 measured at validation`)
  return digest
}

export interface ArchiveInput {
  s3: S3Client
  plan: EdgePackagePlan
  signingKey: KeyObject
  runtime: PackFile[]
  onProgress(bytesDone: number): void
}

/** Builds the archive into plan.artifactBucket/artifactKey and answers what landed there. */
export async function writeArchive({ s3, plan, signingKey, runtime, onProgress }: ArchiveInput): Promise<EdgePackageArtifact> {
  const manifest: PackFile = { path: 'manifest.json', content: Buffer.from(`${JSON.stringify(plan.manifest, null, 2)}\n`), mode: 0o644 }
  const content: Entry[] = [...runtime, ...plan.objects.map((object) => ({ path: `model/${object.path}`, object, mode: 0o644 }))]
  const entries = [manifest, ...content.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))]

  const pack = tar.pack()
  const counter = new Counter()
  const sink = new MultipartSink(s3, plan.artifactBucket, plan.artifactKey)
  const written = pipeline(pack as unknown as Readable, createGzip({ level: plan.gzipLevel }), counter, sink)
  written.catch(() => {})
  // The writer side fails first when the upload does: racing it keeps the reader side from waiting on a drain
  // that will never come.
  const feed = (async () => {
    const files: FileDigest[] = []
    const objectDigests = new Map<string, string>()
    let bytesDone = 0
    for (const e of entries) {
      if ('content' in e) {
        await addBuffer(pack, e.path, e.content, e.mode)
        files.push({ path: e.path, sha256: createHash('sha256').update(e.content).digest('hex') })
        continue
      }
      const digest = await addObject(pack, s3, plan.sourceBucket, e.path, e.object, (n) => onProgress((bytesDone += n)))
      objectDigests.set(e.object.key, digest)
      files.push({ path: e.path, sha256: digest })
    }
    const provenance = provenanceLine(plan, files, objectDigests, signingKey)
    await addBuffer(pack, PROVENANCE_PATH, provenance, 0o644)
    const sums = [...files, { path: PROVENANCE_PATH, sha256: createHash('sha256').update(provenance).digest('hex') }]
    await addBuffer(pack, SUMS_PATH, Buffer.from(sha256sums(sums)), 0o644)
    pack.finalize()
  })()
  feed.catch(() => {})
  try {
    await Promise.race([feed, written.then(() => feed)])
    await written
  } catch (err) {
    pack.destroy(err as Error)
    await written.catch(() => {})
    await sink.abort()
    throw err
  }
  return { bucket: plan.artifactBucket, key: plan.artifactKey, sizeBytes: counter.bytes, sha256: counter.hash.digest('hex') }
}
