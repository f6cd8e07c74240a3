// How MultipartSink (activities/edge-package/multipart.ts) cuts a stream into S3 parts, without a server: a stand-in
// S3 client records each call. It reads a part's bytes only when the upload finishes, as a network send reads its
// buffer while it goes, so a part buffer refilled before its upload ended would show up as corrupted bytes.
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Client as S3Client } from 'minio'
import { MultipartSink, PART_BYTES } from '../../activities/edge-package/multipart'

function standInS3() {
  const calls: string[] = []
  const parts: { part: number; bytes: Buffer }[] = []
  let single: Buffer | undefined
  let completed: { part: number; etag: string }[] | undefined
  const s3 = {
    async initiateNewMultipartUpload() {
      calls.push('initiate')
      return 'upload-1'
    },
    uploadPart(o: { partNumber: number }, body: Buffer) {
      calls.push(`part ${o.partNumber}`)
      return new Promise<{ etag: string }>((resolve) =>
        setTimeout(() => {
          parts.push({ part: o.partNumber, bytes: Buffer.from(body) })
          resolve({ etag: `etag-${o.partNumber}` })
        }, 5),
      )
    },
    async completeMultipartUpload(_b: string, _k: string, _id: string, etags: { part: number; etag: string }[]) {
      calls.push('complete')
      completed = etags.map((e) => ({ ...e }))
    },
    async putObject(_b: string, _k: string, body: Buffer) {
      calls.push('put')
      single = Buffer.from(body)
    },
    async abortMultipartUpload() {
      calls.push('abort')
    },
  }
  return { s3: s3 as unknown as S3Client, calls, parts, single: () => single, completed: () => completed }
}

/** `total` random bytes (no two parts alike), fed in chunks of uneven sizes. */
function input(total: number): { bytes: Buffer; chunks: Buffer[] } {
  const bytes = randomBytes(total)
  const chunks: Buffer[] = []
  for (let at = 0, n = 0; at < total; n++) {
    const size = [65_521, 1, 1_048_576, 777, 3_000_001][n % 5]!
    chunks.push(bytes.subarray(at, at + size))
    at += size
  }
  return { bytes, chunks }
}

describe('S3 parts of a streamed object', () => {
  test('two and a half parts: full parts in order, the rest last, every byte where it was, completed with each etag', async () => {
    const { bytes, chunks } = input(2 * PART_BYTES + PART_BYTES / 2 + 3)
    const s = standInS3()
    await pipeline(Readable.from(chunks), new MultipartSink(s.s3, 'b', 'k'))
    expect(s.calls).toEqual(['initiate', 'part 1', 'part 2', 'part 3', 'complete'])
    expect(s.parts.map((p) => [p.part, p.bytes.length])).toEqual([
      [1, PART_BYTES],
      [2, PART_BYTES],
      [3, PART_BYTES / 2 + 3],
    ])
    expect(Buffer.concat(s.parts.map((p) => p.bytes)).equals(bytes)).toBe(true)
    expect(s.completed()).toEqual([1, 2, 3].map((part) => ({ part, etag: `etag-${part}` })))
  })

  test('exactly one part is one multipart part; less than a part is a single PUT; an empty stream is one empty PUT', async () => {
    const one = standInS3()
    const exact = input(PART_BYTES)
    await pipeline(Readable.from(exact.chunks), new MultipartSink(one.s3, 'b', 'k'))
    expect(one.calls).toEqual(['initiate', 'part 1', 'complete'])
    expect(one.parts[0]!.bytes.equals(exact.bytes)).toBe(true)

    const small = standInS3()
    const few = input(1000)
    await pipeline(Readable.from(few.chunks), new MultipartSink(small.s3, 'b', 'k'))
    expect(small.calls).toEqual(['put'])
    expect(small.single()!.equals(few.bytes)).toBe(true)

    const none = standInS3()
    await pipeline(Readable.from([]), new MultipartSink(none.s3, 'b', 'k'))
    expect(none.calls).toEqual(['put'])
    expect(none.single()!.length).toBe(0)
  })
})
