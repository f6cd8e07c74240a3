import { Readable, Transform } from 'node:stream'
import { publishEvent } from '../events/service'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { recordAudit } from '../audit/service'
import { notifyWatchers } from '../notifications/service'
import { tenantOf, type RequestContext } from '../identity/context'
import { modelsWorkflowIds, type ValidationOutcome } from '../../workflows/contract-models'
import type { CreateModelVersionInput, ModelFormat, ModelVersion, ModelVersionStatus } from './model'
import { generalBucketOf, presignedPuts, putObjectStream } from './objects'
import { findModelVersion, insertModelVersion, listModelVersions, markFailed, markReady, type ModelVersionRow } from './queries'
import { objectsOfSource } from './sources'
import { recordUsage } from '../usage/record'
import type { Permission } from '../identity/permissions'
import { listReach, projectForNew, reachResource, sameProjectOrTenantWide } from '../project-members/reach'

export const toModelVersion = (r: ModelVersionRow): ModelVersion => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  format: r.format,
  status: r.status,
  failureReason: r.failure_reason,
  source: r.source,
  objects: r.objects,
  bucket: r.bucket,
  totalBytes: r.total_bytes,
  validationWorkflowId: modelsWorkflowIds.validation(r.tenant_id, r.id),
  validatedAt: r.validated_at?.toISOString() ?? null,
  projectId: r.project_id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
})

const notFound = () => new ApiError('MODEL_VERSION_NOT_FOUND', 'No model version with this id in the current tenant')

/** The version of the caller's tenant that the caller reaches with `point` (api/project-members/reach.ts), or
 *  MODEL_VERSION_NOT_FOUND (a malformed id included): another project's version is as absent as another tenant's. */
export async function ownVersion(db: Db, ctx: RequestContext, id: string, point: Permission): Promise<ModelVersionRow> {
  const row = isUuid(id) ? await findModelVersion(db, tenantOf(ctx).tenantId, id) : undefined
  if (!row) throw notFound()
  await reachResource(db, ctx, row.project_id, point, notFound)
  return row
}

export const versionTarget = (r: ModelVersionRow) => ({ type: 'model_version', id: r.id })

export const invalidStatus = (row: ModelVersionRow, wanted: string) =>
  new ApiError('MODEL_VERSION_INVALID_STATUS', `The model version is ${row.status}; this needs it ${wanted}`)

/** A new version starts as a draft: its objects may not exist yet (they are uploaded through upload-urls). */
export async function createModelVersion({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, input: CreateModelVersionInput) {
  const { tenantId } = tenantOf(ctx)
  // The project is decided first when the body names one, so a caller who may not write there learns nothing of the source.
  const named = input.projectId === undefined ? undefined : await projectForNew(sql, ctx, input.projectId, 'model:write')
  const { source, objects, trainingJobId, trainingJobProjectId } = await objectsOfSource(sql, ctx, input.source)
  const projectId = named !== undefined ? named : await projectForNew(sql, ctx, trainingJobProjectId ?? undefined, 'model:write')
  if (!sameProjectOrTenantWide(trainingJobProjectId, projectId)) {
    const message = `the training job belongs to project ${trainingJobProjectId}: a version of ${projectId ?? 'the whole tenant'} cannot be made from it`
    throw new ApiError('VALIDATION_ERROR', message, { errors: [{ path: 'body.source.trainingJobId', message }] })
  }
  return sql.begin(async (tx) => {
    const row = await insertModelVersion(tx, { tenantId, projectId, name: input.name, format: input.format, source, trainingJobId, objects })
    await recordAudit(tx, ctx, {
      action: 'model_version.created',
      tenantId,
      target: versionTarget(row),
      details: { name: row.name, format: row.format, sourceKind: row.source_kind, trainingJobId, projectId },
    })
    return toModelVersion(row)
  })
}

export async function getModelVersion({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  return toModelVersion(await ownVersion(sql, ctx, id, 'model:read'))
}

export async function listVersions(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { status?: ModelVersionStatus; format?: ModelFormat; projectId?: string },
) {
  const { tenantId } = tenantOf(ctx)
  const reach = await listReach(sql, ctx, 'model:read', q.projectId)
  const filters = { status: q.status, format: q.format }
  const binding = { route: 'GET /model-versions', scope: `tenant:${tenantId}`, filters: { ...filters, projectId: q.projectId } }
  const p = await paginate(keys, binding, q, (after, limit) => listModelVersions(sql, tenantId, reach, filters, after, limit), createdCursorOf)
  return mapPage(p, toModelVersion)
}

/** Presigned PUT URLs for every object of a draft, in the tenant's general bucket. Issuing them changes no row,
 *  but grants write access for a while, so it is recorded: when they expire, never the URLs (they are bearer
 *  credentials). */
export async function uploadUrls({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  const row = await ownVersion(sql, ctx, id, 'model:write')
  if (row.status !== 'draft') throw invalidStatus(row, 'draft (uploads end when validation starts)')
  const { bucket, s3 } = await generalBucketOf(sql, config, tenantId)
  const ttl = config.MODEL_UPLOAD_URL_TTL_SECONDS
  const expiresAt = new Date(Date.now() + ttl * 1000).toISOString()
  const uploads = await presignedPuts(s3, bucket, row.objects, ttl)
  await sql.begin((tx) =>
    recordAudit(tx, ctx, {
      action: 'model_version.upload_urls_issued',
      tenantId,
      target: versionTarget(row),
      details: { objectCount: uploads.length, expiresAt },
    }),
  )
  return { bucket, expiresAt, uploads }
}

/** One object of a draft streamed through the API to the tenant's general bucket: for a browser, whose page may
 *  reach its own origin only (the console's CSP), and for storage no browser can reach. The declared length must
 *  be the object's declared size, if it has one, and at most MODEL_UPLOAD_MAX_BYTES; a body that ends short or runs
 *  long is refused, and nothing is recorded then. */
export async function uploadObject(
  { sql, config }: Pick<ServiceDeps, 'sql' | 'config'>,
  ctx: RequestContext,
  id: string,
  key: string,
  body: ReadableStream<Uint8Array> | null,
  contentLength: string | null,
) {
  const { tenantId } = tenantOf(ctx)
  const row = await ownVersion(sql, ctx, id, 'model:write')
  if (row.status !== 'draft') throw invalidStatus(row, 'draft (uploads end when validation starts)')
  const object = row.objects.find((o) => o.key === key)
  if (!object) {
    throw new ApiError('VALIDATION_ERROR', 'key names no object of this model version', {
      errors: [{ path: 'query.key', message: "Not one of the version's object keys" }],
    })
  }
  const size = contentLength !== null && /^\d{1,16}$/.test(contentLength) ? Number(contentLength) : NaN
  if (!Number.isSafeInteger(size) || (body === null && size > 0))
    throw new ApiError('BAD_REQUEST', "An upload needs its Content-Length (the object's size in bytes)")
  if (size > config.MODEL_UPLOAD_MAX_BYTES)
    throw new ApiError('BAD_REQUEST', `Request body exceeds ${config.MODEL_UPLOAD_MAX_BYTES} bytes (MODEL_UPLOAD_MAX_BYTES)`)
  if (object.sizeBytes !== null && size !== object.sizeBytes) {
    throw new ApiError('IMPORTED_CHECKPOINT_INCOMPLETE', `The object "${key}" is declared as ${object.sizeBytes} bytes; the upload is ${size}`)
  }
  const { bucket, s3 } = await generalBucketOf(sql, config, tenantId)
  const counted = exactly(size)
  const source = body ? Readable.fromWeb(body as unknown as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([])
  source.on('error', (err) => counted.destroy(err))
  await putObjectStream(s3, bucket, key, source.pipe(counted), size)
  await sql.begin((tx) =>
    recordAudit(tx, ctx, {
      action: 'model_version.object_uploaded',
      tenantId,
      target: versionTarget(row),
      details: { key, sizeBytes: size },
    }),
  )
  return { key, sizeBytes: size }
}

/** Passes bytes through and fails the stream unless exactly `size` of them pass. */
function exactly(size: number): Transform {
  let seen = 0
  const short = () => new ApiError('BAD_REQUEST', `The upload ended after ${seen} of its ${size} bytes`)
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length
      done(seen > size ? new ApiError('BAD_REQUEST', `The upload is longer than its Content-Length (${size} bytes)`) : null, chunk)
    },
    flush(done) {
      done(seen < size ? short() : null)
    },
  })
}

/** validating → ready | failed with its event, its usage and the notice to whoever started it, in one transaction; a
 *  repeat (a retried activity) changes nothing. The notices' mail is started by the mail sweep. `run`: the
 *  validation's workflow run, naming its usage events (a failed version may be validated again, and each run's work
 *  is metered). */
export async function recordValidationOutcome(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  tenantId: string,
  id: string,
  outcome: ValidationOutcome,
  run: string,
) {
  const told = (tx: Db, row: ModelVersionRow) =>
    notifyWatchers(tx, keys, `model_version_validation:${id}`, 'model_version.validation_finished', {
      modelVersionId: id,
      name: row.name,
      status: row.status === 'ready' ? 'ready' : 'failed',
    })
  return sql.begin(async (tx) => {
    // Metered with the outcome, once: only the transaction that moves the version out of validating writes it.
    const meter = async (row: ModelVersionRow) => {
      await recordUsage(tx, {
        tenantId,
        projectId: row.project_id,
        meter: 'model_validation.versions',
        quantity: 1,
        subject: id,
        idempotencyKey: `model_validation.versions:${run}`,
      })
      if (outcome.cpuMs !== undefined)
        await recordUsage(tx, {
          tenantId,
          projectId: row.project_id,
          meter: 'model_validation.cpu',
          quantity: outcome.cpuMs,
          idempotencyKey: `model_validation.cpu:${run}`,
        })
    }
    if (outcome.status === 'ready') {
      const totalBytes = outcome.objects.reduce((n, o) => n + o.sizeBytes, 0)
      const row = await markReady(tx, tenantId, id, outcome.objects, totalBytes)
      if (row) await meter(row)
      if (row)
        await publishEvent(tx, tenantId, 'model_version.ready', {
          modelVersionId: id,
          name: row.name,
          format: row.format,
          sourceKind: row.source_kind,
          totalBytes,
          projectId: row.project_id,
        })
      if (row) await told(tx, row)
      return row?.status
    }
    const row = await markFailed(tx, tenantId, id, outcome.reason.slice(0, 1000))
    if (row) await meter(row)
    if (row)
      await publishEvent(tx, tenantId, 'model_version.failed', {
        modelVersionId: id,
        name: row.name,
        format: row.format,
        sourceKind: row.source_kind,
        reason: row.failure_reason!,
        projectId: row.project_id,
      })
    if (row) await told(tx, row)
    return row?.status
  })
}
