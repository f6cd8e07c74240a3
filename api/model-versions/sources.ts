// From a declared source to the objects a version consists of. Every rule here answers before anything is stored,
// with the code the OpenAPI names for it.
import type { Db } from '../platform/db'
import { ApiError, type ErrorCode } from '../platform/errors'
import { asPrefix, objectKeyProblem } from '../storage/object-keys'
import type { RequestContext } from '../identity/context'
import { reachableJob } from '../training-jobs/service'
import type { ModelSourceInput, VersionObject } from './model'

const refuse = (code: ErrorCode, path: string, message: string) =>
  new ApiError(code, `${path.slice('body.'.length)} ${message}`, { errors: [{ path, message }] })

function checkedKey(key: string, path: string, code: ErrorCode = 'IMPORTED_CHECKPOINT_INVALID_PATH', opts?: { prefix?: boolean }) {
  const problem = objectKeyProblem(key, opts)
  if (problem) throw refuse(code, path, problem)
  return key
}

const declared = (key: string, o: { sizeBytes?: number; sha256?: string }): VersionObject => ({ key, sizeBytes: o.sizeBytes ?? null, sha256: o.sha256 ?? null })

function bundleObjects(source: Extract<ModelSourceInput, { kind: 'model_bundle' }>): { prefix: string; objects: VersionObject[] } {
  if (source.prefix === undefined || source.prefix === '') throw refuse('MODEL_BUNDLE_PREFIX_REQUIRED', 'body.source.prefix', 'is required for a model bundle')
  const prefix = asPrefix(checkedKey(source.prefix, 'body.source.prefix', 'MODEL_BUNDLE_PREFIX_INVALID', { prefix: true }))
  if (!source.objects?.length) throw refuse('MODEL_BUNDLE_OBJECTS_REQUIRED', 'body.source.objects', 'must list at least one object')
  const seen = new Set<string>()
  const objects = source.objects.map((o, i) => {
    const key = checkedKey(o.key, `body.source.objects[${i}].key`)
    if (seen.has(key)) throw refuse('VALIDATION_ERROR', `body.source.objects[${i}].key`, `"${key}" is listed twice`)
    seen.add(key)
    return declared(`${prefix}${key}`, o)
  })
  return { prefix, objects }
}

interface ResolvedSource {
  source: ModelSourceInput
  objects: VersionObject[]
  trainingJobId: string | null
  /** The training job's project (null: tenant-wide, or no job). */
  trainingJobProjectId: string | null
}

/** The objects of a new version, with whatever sizes and digests the caller declared, and its training job if any
 *  (one the caller reaches: another project's job is MODEL_BUNDLE_JOB_NOT_FOUND, as another tenant's is).
 *  A bundle's prefix is kept with its one trailing slash, so a key relative to it is `objects[i].key` minus it. */
export async function objectsOfSource(db: Db, ctx: RequestContext, source: ModelSourceInput): Promise<ResolvedSource> {
  switch (source.kind) {
    case 'imported_checkpoint':
      return { source, objects: [declared(checkedKey(source.path, 'body.source.path'), source)], trainingJobId: null, trainingJobProjectId: null }
    case 'model_bundle': {
      const { prefix, objects } = bundleObjects(source)
      return { source: { ...source, prefix }, objects, trainingJobId: null, trainingJobProjectId: null }
    }
    case 'training_job': {
      const job = await reachableJob(db, ctx, source.trainingJobId, 'model:read')
      if (job.status !== 'completed')
        throw refuse('TRAINING_JOB_NOT_COMPLETED', 'body.source.trainingJobId', `names a job that is ${job.status}, not completed`)
      if (!job.output_artifact_path)
        throw refuse('TRAINING_JOB_HAS_NO_OUTPUT_ARTIFACT', 'body.source.trainingJobId', 'names a job that completed without an output artifact')
      return { source, objects: [declared(job.output_artifact_path, {})], trainingJobId: job.id, trainingJobProjectId: job.project_id }
    }
  }
}
