// The version's objects in the tenant's general bucket: where they are, whether they are (still) there, and the
// presigned URLs that put them there. Digests are computed by the validation workflow, never on a request.
import type { Readable } from 'node:stream'
import type { Client as S3Client } from 'minio'
import type { Config } from '../platform/config'
import type { Sql } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isMissingObject, isUnreachable, s3For } from '../storage/s3'
import { readyBuckets, regionOf } from '../storage/service'
import type { VersionObject } from './model'
import type { ModelVersionRow } from './queries'

const STAT_CONCURRENCY = 16

export interface GeneralBucket {
  regionId: string
  bucket: string
  s3: S3Client
}

/** The tenant's general bucket, once its storage is ready (else STORAGE_NOT_READY / STORAGE_PROVISIONING_FAILED). */
export async function generalBucketOf(sql: Sql, config: Config, tenantId: string): Promise<GeneralBucket> {
  const general = (await readyBuckets(sql, tenantId)).find((b) => b.kind === 'general')!
  return { regionId: general.region_id, bucket: general.name, s3: s3For(regionOf(config, general.region_id)) }
}

async function sizeOf(s3: S3Client, bucket: string, key: string): Promise<number | null> {
  try {
    return (await s3.statObject(bucket, key)).size
  } catch (err) {
    if (isMissingObject(err)) return null
    if (isUnreachable(err)) throw new ApiError('SERVICE_UNAVAILABLE', 'The storage region cannot be reached; try again later')
    throw err
  }
}

/** Stats every object (a few at a time) and refuses on the first, in list order, that is missing or of another size
 *  than recorded: a missing checkpoint or training output is IMPORTED_CHECKPOINT_NOT_FOUND (404); a missing bundle
 *  object, or any size mismatch, is IMPORTED_CHECKPOINT_INCOMPLETE (400). */
export async function assertObjectsPresent(s3: S3Client, bucket: string, sourceKind: ModelVersionRow['source_kind'], objects: VersionObject[]) {
  const sizes: (number | null)[] = []
  for (let i = 0; i < objects.length; i += STAT_CONCURRENCY) {
    sizes.push(...(await Promise.all(objects.slice(i, i + STAT_CONCURRENCY).map((o) => sizeOf(s3, bucket, o.key)))))
  }
  objects.forEach((o, i) => {
    const size = sizes[i]
    if (size === null) {
      if (sourceKind === 'model_bundle') throw new ApiError('IMPORTED_CHECKPOINT_INCOMPLETE', `The bundle object "${o.key}" is missing`)
      throw new ApiError('IMPORTED_CHECKPOINT_NOT_FOUND', `No object "${o.key}" in the tenant's general bucket`)
    }
    if (o.sizeBytes !== null && size !== o.sizeBytes) {
      throw new ApiError('IMPORTED_CHECKPOINT_INCOMPLETE', `The object "${o.key}" is ${size} bytes; ${o.sizeBytes} expected`)
    }
  })
}

/** For the package build (api/edge-packages): the validated objects are still where validation found them, at the
 *  sizes it measured. IMPORTED_CHECKPOINT_NOT_FOUND (404) / IMPORTED_CHECKPOINT_INCOMPLETE (400) otherwise, and
 *  MODEL_VERSION_INVALID_STATUS (400) for a version that is not ready. */
export async function assertSourceStillPresent({ config }: Pick<ServiceDeps, 'config'>, tenantId: string, version: ModelVersionRow): Promise<void> {
  if (version.tenant_id !== tenantId) throw new ApiError('MODEL_VERSION_NOT_FOUND', 'No model version with this id in the current tenant')
  if (version.status !== 'ready' || !version.bucket || !version.region_id) {
    throw new ApiError('MODEL_VERSION_INVALID_STATUS', `The model version is ${version.status}, not ready`)
  }
  await assertObjectsPresent(s3For(regionOf(config, version.region_id)), version.bucket, version.source_kind, version.objects)
}

/** One presigned PUT per object, valid for `ttlSeconds`. */
export async function presignedPuts(s3: S3Client, bucket: string, objects: VersionObject[], ttlSeconds: number) {
  return Promise.all(objects.map(async (o) => ({ key: o.key, method: 'PUT' as const, url: await s3.presignedPutObject(bucket, o.key, ttlSeconds) })))
}

/** Streams `size` bytes to `key` as they arrive (the minio client switches to a multipart upload for big objects),
 *  never holding the object in memory. */
export async function putObjectStream(s3: S3Client, bucket: string, key: string, body: Readable, size: number): Promise<void> {
  try {
    await s3.putObject(bucket, key, body, size)
  } catch (err) {
    if (isUnreachable(err)) throw new ApiError('SERVICE_UNAVAILABLE', 'The storage region cannot be reached; try again later')
    throw err
  }
}
