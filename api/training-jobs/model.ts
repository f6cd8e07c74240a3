import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { OBJECT_KEY_PATTERN } from '../storage/object-keys'

export const TRAINING_JOB_STATUSES = ['running', 'completed', 'failed'] as const
export type TrainingJobStatus = (typeof TRAINING_JOB_STATUSES)[number]

const ProjectIdField = z
  .uuid()
  .optional()
  .describe(
    'The project the job belongs to (a project of this tenant, not archived, where you hold model:write; else 400 VALIDATION_ERROR ' +
      "or 403). Omitted: tenant-wide, or a project-scoped token's own project",
  )

export const CreateTrainingJobBodyDto = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    projectId: ProjectIdField,
  })
  .meta({ id: 'CreateTrainingJobBodyDto' })

export const CompleteTrainingJobBodyDto = z
  .strictObject({
    status: z.enum(['completed', 'failed']),
    outputArtifactPath: z
      .string()
      .max(1024)
      .meta({ pattern: OBJECT_KEY_PATTERN }) // the service's objectKeyProblem, stated; a refusal keeps its own code
      .optional()
      .describe(
        "completed only: the object key of the produced model in the tenant's general bucket (relative; no `..`, no leading `/`, " +
          'no backslash, no bucket name or scheme: else IMPORTED_CHECKPOINT_INVALID_PATH). Without one, a model version cannot be ' +
          'made from the job (TRAINING_JOB_HAS_NO_OUTPUT_ARTIFACT)',
      ),
    reason: z.string().trim().min(1).max(1000).optional().describe('failed only: why; published in training_job.failed'),
  })
  // The pairing the service checks (its field errors stay), stated for the document.
  .meta({
    id: 'CompleteTrainingJobBodyDto',
    oneOf: [{ properties: { status: { const: 'completed' }, reason: false } }, { properties: { status: { const: 'failed' }, outputArtifactPath: false } }],
  })

export const TrainingJobDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    name: z.string(),
    status: z.enum(TRAINING_JOB_STATUSES),
    outputArtifactPath: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: z.iso.datetime(),
    completedAt: z.iso.datetime().nullable(),
    projectId: z.uuid().nullable().describe('The project the job belongs to; null: tenant-wide'),
  })
  .meta({ id: 'TrainingJobDto' })

export const TrainingJobParams = z.object({ trainingJobId: z.string() })
export const ListTrainingJobsQuery = PageQuery.extend({
  status: z.enum(TRAINING_JOB_STATUSES).optional(),
  projectId: z.uuid().optional().describe("Only this project's jobs; a project you do not reach lists nothing"),
})

export type CompleteTrainingJobInput = z.infer<typeof CompleteTrainingJobBodyDto>
export type TrainingJob = z.infer<typeof TrainingJobDto>
