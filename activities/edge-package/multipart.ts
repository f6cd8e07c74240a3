// A Writable that is one S3 multipart upload: bytes are copied into fixed parts and each part is sent while the next
// fills, so memory stays at two parts whatever the object's size (the minio client's own putObject sizes its parts,
// and so its buffer, for the largest object S3 allows when the length is unknown).
import { Writable } from 'node:stream'
import type { Client as S3Client } from 'minio'
import { collectStreamedGarbage, COLLECT_EVERY_BYTES } from '../streamed-garbage'

/** 8 MiB parts (S3's minimum is 5 MiB; 10,000 parts allow 80 GiB), one collection of the streamed garbage after
 *  each (see streamed-garbage.ts). */
export const PART_BYTES = COLLECT_EVERY_BYTES

export class MultipartSink extends Writable {
  private uploadId: string | undefined
  /** Two part buffers, allocated once and used in turn: one filling while the other is sent. Reusing them (rather than
   *  concatenating each part's chunks into a new 8 MiB buffer) leaves no part-sized garbage between collections,
   *  which is where the peak resident set used to jump. */
  private readonly parts = [Buffer.allocUnsafeSlow(PART_BYTES), Buffer.allocUnsafeSlow(PART_BYTES)]
  private filling = 0
  private filled = 0
  private inFlight: Promise<void> = Promise.resolve()
  private readonly etags: { part: number; etag: string }[] = []

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly key: string,
  ) {
    super({ highWaterMark: 1024 * 1024 })
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void) {
    let offset = 0
    const fill = (): void => {
      while (offset < chunk.length) {
        const copied = chunk.copy(this.parts[this.filling]!, this.filled, offset)
        this.filled += copied
        offset += copied
        if (this.filled === PART_BYTES) return void this.flushPart().then(fill, done)
      }
      done()
    }
    fill()
  }

  override _final(done: (err?: Error | null) => void) {
    this.complete().then(() => done(), done)
  }

  /** Sends the filling buffer once the previous part is in, then fills the other one (that part's, now sent). */
  private async flushPart() {
    const body = this.parts[this.filling]!.subarray(0, this.filled)
    await this.inFlight
    this.uploadId ??= await this.s3.initiateNewMultipartUpload(this.bucket, this.key, { 'Content-Type': 'application/gzip' })
    const part = this.etags.length + 1
    const uploadID = this.uploadId
    this.etags.push({ part, etag: '' })
    this.inFlight = this.s3.uploadPart({ bucketName: this.bucket, objectName: this.key, uploadID, partNumber: part, headers: {} }, body).then((r) => {
      this.etags[part - 1] = { part, etag: r.etag }
      collectStreamedGarbage()
    })
    // Surfaces on the next await; never an unhandled rejection in between.
    this.inFlight.catch(() => {})
    this.filling = 1 - this.filling
    this.filled = 0
  }

  private async complete() {
    if (this.uploadId === undefined) {
      // Smaller than one part: a single PUT, no multipart state left behind.
      await this.s3.putObject(this.bucket, this.key, this.parts[this.filling]!.subarray(0, this.filled), this.filled, { 'Content-Type': 'application/gzip' })
      return
    }
    if (this.filled > 0) await this.flushPart()
    await this.inFlight
    await this.s3.completeMultipartUpload(this.bucket, this.key, this.uploadId!, this.etags)
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
