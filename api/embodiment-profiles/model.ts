import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { singleLineText } from '../platform/text'

// What a package's robot client feeds and checks; the package manifest (api/edge-packages/manifest.ts) carries them.
export const FEATURE_DTYPES = ['float32', 'float64', 'int32', 'int64', 'uint8', 'bool'] as const
export const FEATURE_KINDS = ['image', 'state', 'action'] as const

export type FeatureDtype = (typeof FEATURE_DTYPES)[number]

/** One observation or action feature of an embodiment profile. Cameras are `image` features (uint8, [H, W, 3]). */
export interface Feature {
  name: string
  dtype: FeatureDtype
  shape: number[]
  kind?: (typeof FEATURE_KINDS)[number]
}
export const CONTROL_RATE_MAX_HZ = 1000

export const FeatureDto = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$/, 'letters, digits, _ . / - (up to 128), starting with a letter or digit')
      .describe(
        'Unique within its list (a repeated name is 400 VALIDATION_ERROR; JSON Schema cannot state uniqueness by one property); ' +
          'the key the policy and the robot client use (e.g. `observation.images.top`, `state`)',
      ),
    dtype: z.enum(FEATURE_DTYPES),
    shape: z.array(z.number().int().min(1).max(1_000_000)).min(1).max(6).describe('1 to 6 positive dimensions'),
    kind: z.enum(FEATURE_KINDS).optional().describe('`image` for a camera: dtype uint8 and shape [height, width, channels]'),
  })
  .superRefine((f, ctx) => {
    if (f.kind === 'image' && (f.dtype !== 'uint8' || f.shape.length !== 3)) {
      ctx.addIssue({ code: 'custom', message: 'an image feature is uint8 with 3 dimensions [height, width, channels]', path: ['kind'] })
    }
  })
  // The image rule above, stated for the document (the refinement decides, with its field error).
  .meta({
    id: 'EmbodimentFeatureDto',
    if: { properties: { kind: { const: 'image' } }, required: ['kind'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's own if/then keywords, never awaited
    then: { properties: { dtype: { const: 'uint8' }, shape: { minItems: 3, maxItems: 3 } } },
  })

const uniqueNames = (list: { name: string }[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>()
  list.forEach((f, i) => {
    if (seen.has(f.name)) ctx.addIssue({ code: 'custom', message: `feature name "${f.name}" appears twice`, path: [i, 'name'] })
    seen.add(f.name)
  })
}
const Features = z.array(FeatureDto).min(1).max(64).superRefine(uniqueNames)

const Name = singleLineText(100)
const RobotType = singleLineText(100).describe('Free text naming the robot model, e.g. `aloha`, `so100`, `franka`')
const ControlRate = z.number().gt(0).max(CONTROL_RATE_MAX_HZ).describe(`Actions per second the robot consumes; above 0, at most ${CONTROL_RATE_MAX_HZ}`)

export const CreateEmbodimentProfileBodyDto = z
  .strictObject({
    name: Name.describe('Unique within the tenant'),
    robotType: RobotType,
    controlRateHz: ControlRate,
    observationFeatures: Features.describe('What the robot sends the policy each step (1 to 64, names unique)'),
    actionFeatures: Features.describe('What the policy returns per action (1 to 64, names unique)'),
    projectId: z
      .uuid()
      .optional()
      .describe(
        'The project the profile belongs to (a project of this tenant, not archived, where you hold model:write; else 400 ' +
          "VALIDATION_ERROR or 403). Omitted: tenant-wide, or a project-scoped token's own project. Fixed once created",
      ),
  })
  .meta({ id: 'CreateEmbodimentProfileBodyDto' })

export const UpdateEmbodimentProfileBodyDto = CreateEmbodimentProfileBodyDto.omit({ projectId: true }).partial().meta({ id: 'UpdateEmbodimentProfileBodyDto' })

export const EmbodimentProfileDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    name: z.string(),
    robotType: z.string(),
    controlRateHz: z.number(),
    observationFeatures: z.array(FeatureDto),
    actionFeatures: z.array(FeatureDto),
    version: z.number().int().describe('The row version; the ETag is `"v<version>"`'),
    projectId: z.uuid().nullable().describe('The project the profile belongs to; null: tenant-wide'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'EmbodimentProfileDto' })

export const ProfileParams = z.object({ profileId: z.string() })
export const ListProfilesQuery = PageQuery.extend({
  projectId: z.uuid().optional().describe("Only this project's profiles; a project you do not reach lists nothing"),
})

export type CreateProfileInput = z.infer<typeof CreateEmbodimentProfileBodyDto>
export type UpdateProfileInput = z.infer<typeof UpdateEmbodimentProfileBodyDto>
export type EmbodimentProfile = z.infer<typeof EmbodimentProfileDto>
