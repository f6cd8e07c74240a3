import { publishEvent } from '../events/service'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import type { Permission } from '../identity/permissions'
import { objectKeyProblem } from '../storage/object-keys'
import { listReach, projectForNew, reachResource } from '../project-members/reach'
import type { CompleteTrainingJobInput, TrainingJob, TrainingJobStatus } from './model'
import { findTrainingJob, finishTrainingJob, insertTrainingJob, listTrainingJobs, type TrainingJobRow } from './queries'

export const toTrainingJob = (r: TrainingJobRow): TrainingJob => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  status: r.status,
  outputArtifactPath: r.output_artifact_path,
  failureReason: r.failure_reason,
  createdAt: r.created_at.toISOString(),
  completedAt: r.completed_at?.toISOString() ?? null,
  projectId: r.project_id,
})

// A training job is the job that produces a model bundle: its codes are the MODEL_BUNDLE_JOB_* ones.
export const trainingJobNotFound = () => new ApiError('MODEL_BUNDLE_JOB_NOT_FOUND', 'No training job with this id in the current tenant')

const jobTarget = (r: TrainingJobRow) => ({ type: 'training_job', id: r.id })

export async function createTrainingJob({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, input: { name: string; projectId?: string }) {
  const { tenantId } = tenantOf(ctx)
  const projectId = await projectForNew(sql, ctx, input.projectId, 'model:write')
  return sql.begin(async (tx) => {
    const row = await insertTrainingJob(tx, tenantId, input.name, projectId)
    await recordAudit(tx, ctx, { action: 'training_job.created', tenantId, target: jobTarget(row), details: { name: row.name, projectId } })
    return toTrainingJob(row)
  })
}

/** The job of the caller's tenant that the caller reaches with `point` (api/project-members/reach.ts), else
 *  MODEL_BUNDLE_JOB_NOT_FOUND: another project's job is as absent as another tenant's. */
export async function reachableJob(db: Db, ctx: RequestContext, id: string, point: Permission): Promise<TrainingJobRow> {
  const row = isUuid(id) ? await findTrainingJob(db, tenantOf(ctx).tenantId, id) : undefined
  if (!row) throw trainingJobNotFound()
  await reachResource(db, ctx, row.project_id, point, trainingJobNotFound)
  return row
}

export async function getTrainingJob({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  return toTrainingJob(await reachableJob(sql, ctx, id, 'model:read'))
}

export async function listJobs(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { status?: TrainingJobStatus; projectId?: string },
) {
  const { tenantId } = tenantOf(ctx)
  const reach = await listReach(sql, ctx, 'model:read', q.projectId)
  const binding = { route: 'GET /training-jobs', scope: `tenant:${tenantId}`, filters: { status: q.status, projectId: q.projectId } }
  const p = await paginate(keys, binding, q, (after, limit) => listTrainingJobs(sql, tenantId, reach, q.status, after, limit), createdCursorOf)
  return mapPage(p, toTrainingJob)
}

function checkedCompletion(input: CompleteTrainingJobInput) {
  const path = input.outputArtifactPath
  if (input.status === 'failed' && path !== undefined) {
    throw new ApiError('VALIDATION_ERROR', 'A failed job has no output artifact', {
      errors: [{ path: 'body.outputArtifactPath', message: 'only with status completed' }],
    })
  }
  if (input.status === 'completed' && input.reason !== undefined) {
    throw new ApiError('VALIDATION_ERROR', 'reason is for failed jobs', { errors: [{ path: 'body.reason', message: 'only with status failed' }] })
  }
  const problem = path === undefined ? null : objectKeyProblem(path)
  if (problem) {
    throw new ApiError('IMPORTED_CHECKPOINT_INVALID_PATH', `outputArtifactPath ${problem}`, { errors: [{ path: 'body.outputArtifactPath', message: problem }] })
  }
  return { status: input.status, outputArtifactPath: path ?? null, reason: input.status === 'failed' ? (input.reason ?? 'no reason given') : null }
}

/** running → completed | failed, once, with its event and its audit entry in the same transaction. */
export async function completeTrainingJob({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string, input: CompleteTrainingJobInput) {
  const { tenantId } = tenantOf(ctx)
  const completion = checkedCompletion(input)
  const job = await reachableJob(sql, ctx, id, 'model:write')
  return sql.begin(async (tx) => {
    const row = await finishTrainingJob(tx, tenantId, id, completion)
    if (!row)
      throw new ApiError(
        'MODEL_BUNDLE_JOB_NOT_RUNNING',
        `The training job is ${job.status === 'running' ? 'no longer running' : job.status}; only a running job can complete`,
      )
    if (row.status === 'completed') {
      await publishEvent(tx, tenantId, 'training_job.completed', {
        trainingJobId: row.id,
        name: row.name,
        outputArtifactPath: row.output_artifact_path,
        projectId: row.project_id,
      })
    } else {
      await publishEvent(tx, tenantId, 'training_job.failed', { trainingJobId: row.id, name: row.name, reason: row.failure_reason!, projectId: row.project_id })
    }
    await recordAudit(tx, ctx, {
      action: 'training_job.completed',
      tenantId,
      target: jobTarget(row),
      details: { status: row.status, outputArtifactPath: row.output_artifact_path },
    })
    return toTrainingJob(row)
  })
}
