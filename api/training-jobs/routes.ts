import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { CompleteTrainingJobBodyDto, CreateTrainingJobBodyDto, ListTrainingJobsQuery, TrainingJobDto, TrainingJobParams } from './model'
import { completeTrainingJob, createTrainingJob, getTrainingJob, listJobs } from './service'

/** Additive (issue 13): minimal records of the jobs that produce model bundles, and their completion. */
export const trainingJobsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/training-jobs', tags: ['Models'] })
    .use(http)
    .post(
      '',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await createTrainingJob(deps, ctx, body))
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        idempotent: true,
        errors: ['M400', 'M409'],
        body: CreateTrainingJobBodyDto,
        response: { 201: envelope(TrainingJobDto) },
        detail: {
          ...links({ trainingJobId: '$response.body#/data/id' }, [
            'GET /v1/training-jobs/{trainingJobId}',
            'POST /v1/training-jobs/{trainingJobId}/completion',
          ]),
          summary: 'Record a training job; it starts running',
        },
      },
    )
    .get('', async ({ request, ctx, query }) => page(request, await listJobs(deps, ctx, query)), {
      auth: { project: 'model:read', of: 'resource' },
      errors: ['M400p'],
      query: ListTrainingJobsQuery,
      response: { 200: listEnvelope(TrainingJobDto) },
      detail: {
        summary: 'Training jobs of this tenant you reach, newest first, optionally of one status and one project (a project-scoped token: its project)',
      },
    })
    .get('/:trainingJobId', async ({ request, ctx, params }) => ok(request, await getTrainingJob(deps, ctx, params.trainingJobId)), {
      auth: { project: 'model:read', of: 'resource' },
      errors: ['M400', 'M404'],
      params: TrainingJobParams,
      response: { 200: envelope(TrainingJobDto) },
      detail: { summary: 'One training job (MODEL_BUNDLE_JOB_NOT_FOUND outside this tenant)' },
    })
    .post(
      '/:trainingJobId/completion',
      async ({ request, ctx, params, body }) => ok(request, await completeTrainingJob(deps, ctx, params.trainingJobId, body)),
      {
        auth: { project: 'model:write', of: 'resource' },
        errors: ['M400', 'M404', 'M409'],
        params: TrainingJobParams,
        body: CompleteTrainingJobBodyDto,
        response: { 200: envelope(TrainingJobDto) },
        detail: {
          summary:
            'Record that a running job completed (with its output artifact) or failed; publishes training_job.completed / ' +
            'training_job.failed. MODEL_BUNDLE_JOB_NOT_RUNNING (409): the job already finished. IMPORTED_CHECKPOINT_INVALID_PATH (400): ' +
            "outputArtifactPath is not a key in the tenant's general bucket",
        },
      },
    )
