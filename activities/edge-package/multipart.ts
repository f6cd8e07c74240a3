// A Writable that is one S3 multipart upload: bytes are cut into fixed parts and each part is sent while the next
// fills, so memory stays at about two parts whatever the object's size (the minio client's own putObject sizes
// its parts, and so its buffer, for the largest object S3 allows when the length is unknown).
import { Writable } from 'node:stream'
import type { Client as S3Client } from 'minio'

export const PART_BYTES = 8 * 1024 * 1024

/** Bun (JavaScriptCore) frees the memory behind dropped Buffers only when it collects, and streaming makes
 *  garbage faster than it decides to: without this the build's peak RSS grew with the checkpoint (+150 MB from
 *  50 to 500 MB in bench/edge-package.ts); with a full collection per part it stays flat. 8 MiB parts (S3's minimum
 *  is 5 MiB) keep both the buffers and the garbage between collections small; 10,000 parts allow 80 GiB. */
const collectStreamedGarbage = () => (globalThis as { Bun?: { gc(sync: boolean): void } }).Bun?.gc(true)

export class MultipartSink extends Writable {
  private uploadId: string | undefined
  private chunks: Buffer[] = []
  private buffered = 0
  private inFlight: Promise<void> = Promise.resolve()
  private readonly etags: { part: number; etag: string }[] = []

  constructor(private readonly s3: S3Client, private readonly bucket: string, private readonly key: string) {
    super({ highWaterMark: 1024 * 1024 })
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void) {
    this.chunks.push(chunk)
    this.buffered += chunk.length
    if (this.buffered < PART_BYTES) return done()
    this.flushPart().then(() => done(), done)
  }

  override _final(done: (err?: Error | null) => void) {
    this.complete().then(() => done(), done)
  }

  /** Waits for the previous part before sending this one: one part in flight, one filling. */
  private async flushPart() {
    const body = Buffer.concat(this.chunks)
    this.chunks = []
    this.buffered = 0
    await this.inFlight
    this.uploadId ??= await this.s3.initiateNewMultipartUpload(this.bucket, this.key, { 'Content-Type': 'application/gzip' })
    const part = this.etags.length + 1
    const uploadID = this.uploadId
    this.etags.push({ part, etag: '' })
    this.inFlight = this.s3.uploadPart({ bucketName: this.bucket, objectName: this.key, uploadID, partNumber: part, headers: {} }, body)
      .then((r) => {
        this.etags[part - 1] = { part, etag: r.etag }
        collectStreamedGarbage()
      })
    // Surfaces on the next await; never an unhandled rejection in between.
    this.inFlight.catch(() => {})
  }

  private async complete() {
    if (this.uploadId === undefined) {
      // Smaller than one part: a single PUT, no multipart state left behind.
      await this.s3.putObject(this.bucket, this.key, Buffer.concat(this.chunks), this.buffered, { 'Content-Type': 'application/gzip' })
      return
    }
    if (this.buffered > 0) await this.flushPart()
    await this.inFlight
    await this.s3.completeMultipartUpload(this.bucket, this.key, this.uploadId, this.etags)
  }

  /** On failure in this process: the parts sent so far are dropped rather than left to the bucket. */
  async abort() {
    await this.inFlight.catch(() => {})
    if (this.uploadId) await this.s3.abortMultipartUpload(this.bucket, this.key, this.uploadId).catch(() => {})
  }
}

/** Aborts every unfinished multipart upload of exactly `key` (a crashed attempt's), and answers how many. */
export async function abortIncompleteUploads(s3: S3Client, bucket: string, key: string): Promise<number> {
  const ids: string[] = []
  for await (const u of s3.listIncompleteUploads(bucket, key, true) as AsyncIterable<{ key: string; uploadId: string }>) {
    if (u.key === key) ids.push(u.uploadId)
  }
  for (const id of ids) await s3.abortMultipartUpload(bucket, key, id)
  return ids.length
}
