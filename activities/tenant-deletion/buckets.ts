// The S3 side of a tenant deletion: one multi-object delete per call (at most 1,000 keys, the API's limit), every
// version and delete marker of a versioned bucket included, then the empty bucket itself.
import type { Client as S3Client } from 'minio'
import { isNoSuchBucket } from '../../api/storage/s3'
import type { PendingKey } from '../../api/tenant-deletion/queries'

/** Up to `limit` entries (object versions and delete markers) of the bucket; [] when it is empty or gone. */
export async function firstEntries(s3: S3Client, bucket: string, limit: number): Promise<PendingKey[]> {
  const out: PendingKey[] = []
  const stream = s3.listObjects(bucket, '', true, { IncludeVersion: true })
  try {
    for await (const o of stream) {
      const item = o as { name?: string; versionId?: string | null }
      if (!item.name) continue
      out.push(item.versionId && item.versionId !== 'null' ? { name: item.name, versionId: item.versionId } : { name: item.name })
      if (out.length >= limit) break
    }
  } catch (err) {
    if (isNoSuchBucket(err)) return []
    throw err
  } finally {
    stream.destroy()
  }
  return out
}

/** Deleting a key that is already gone succeeds in S3, so a resumed job may send the same keys again. */
export async function removeEntries(s3: S3Client, bucket: string, keys: PendingKey[]): Promise<void> {
  try {
    const results = await s3.removeObjects(bucket, keys)
    const failed = results.find((r) => r?.Error && r.Error.Code !== 'NoSuchKey' && r.Error.Code !== 'NoSuchVersion')
    if (failed) throw new Error(`S3 refused to delete ${failed.Error!.Key}: ${failed.Error!.Code} ${failed.Error!.Message ?? ''}`)
  } catch (err) {
    if (!isNoSuchBucket(err)) throw err
  }
}

export async function removeBucket(s3: S3Client, bucket: string): Promise<void> {
  await s3.removeBucket(bucket).catch((err) => {
    if (!isNoSuchBucket(err)) throw err
  })
}

export async function bucketExists(s3: S3Client, bucket: string): Promise<boolean> {
  return s3.bucketExists(bucket)
}
