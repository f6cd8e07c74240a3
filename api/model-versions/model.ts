import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { singleLineText } from '../platform/text'
import { OBJECT_KEY_PATTERN, OBJECT_PREFIX_PATTERN } from '../storage/object-keys'

export const MODEL_FORMATS = ['openpi', 'lerobot', 'onnx'] as const
export const MODEL_VERSION_STATUSES = ['draft', 'validating', 'ready', 'failed'] as const
export type ModelFormat = (typeof MODEL_FORMATS)[number]
export type ModelVersionStatus = (typeof MODEL_VERSION_STATUSES)[number]

const FORMAT_MEANING =
  "What the package serves: `openpi`: an openpi checkpoint directory, served on the robot (local mode) by openpi's own " +
  'policy server image over the openpi websocket protocol; `lerobot`: a LeRobot pretrained policy directory, served by ' +
  "LeRobot's async policy server (gRPC); `onnx`: one `.onnx` graph, which the package's own onnxruntime server runs and " +
  'serves over the openpi websocket protocol'

const KEY_RULES =
  "an object key in the tenant's general bucket: relative (no leading `/`), no `.` or `..` segments, no `//`, no backslash, " +
  'no scheme (`s3://`) and no bucket name in front, at most 1024 bytes'
const Sha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .describe('Lowercase hex SHA-256 the object must have; checked by validation')
const SizeBytes = z
  .number()
  .int()
  .min(0)
  .max(5 * 2 ** 40)
  .describe('Exact size in bytes; checked before and during validation')
const Key = z.string().max(1024)
// The service's own rules (objectKeyProblem), stated for the document only: a refusal keeps its code
// (IMPORTED_CHECKPOINT_INVALID_PATH, MODEL_BUNDLE_PREFIX_*) rather than becoming the validator's VALIDATION_ERROR.
const ObjectKey = Key.meta({ pattern: OBJECT_KEY_PATTERN })
const Prefix = Key.meta({ pattern: OBJECT_PREFIX_PATTERN })

export const ImportedCheckpointSourceDto = z
  .strictObject({
    kind: z.literal('imported_checkpoint'),
    path: ObjectKey.describe(`One object (a checkpoint archive or a single-file model): ${KEY_RULES}. Else IMPORTED_CHECKPOINT_INVALID_PATH`),
    sizeBytes: SizeBytes.optional(),
    sha256: Sha256.optional(),
  })
  .meta({ id: 'ImportedCheckpointSourceDto' })

export const BundleObjectDto = z
  .strictObject({
    key: ObjectKey.describe('Relative to the prefix, same rules (IMPORTED_CHECKPOINT_INVALID_PATH); unique in the bundle'),
    sizeBytes: SizeBytes.optional(),
    sha256: Sha256.optional(),
  })
  .meta({ id: 'BundleObjectDto' })

export const ModelBundleSourceDto = z
  .strictObject({
    kind: z.literal('model_bundle'),
    prefix: Prefix.optional().describe(
      `The bundle's folder: ${KEY_RULES}; a trailing / is added. Missing or empty: MODEL_BUNDLE_PREFIX_REQUIRED; ` +
        'otherwise invalid: MODEL_BUNDLE_PREFIX_INVALID',
    ),
    objects: z
      .array(BundleObjectDto)
      .max(1000)
      .optional()
      .describe('Every object the bundle must contain (1 to 1000). Missing or empty: MODEL_BUNDLE_OBJECTS_REQUIRED'),
  })
  .meta({ id: 'ModelBundleSourceDto' })

export const TrainingJobSourceDto = z
  .strictObject({
    kind: z.literal('training_job'),
    trainingJobId: z
      .uuid()
      .describe(
        'A job of this tenant (else 404 MODEL_BUNDLE_JOB_NOT_FOUND) that completed (else TRAINING_JOB_NOT_COMPLETED) ' +
          "with an output artifact (else TRAINING_JOB_HAS_NO_OUTPUT_ARTIFACT); that object is the version's one object",
      ),
  })
  .meta({ id: 'TrainingJobSourceDto' })

export const ModelSourceDto = z
  .discriminatedUnion('kind', [ImportedCheckpointSourceDto, ModelBundleSourceDto, TrainingJobSourceDto])
  .describe('Exactly one source')
  .meta({ id: 'ModelSourceDto' })
export type ModelSourceInput = z.infer<typeof ModelSourceDto>

export const CreateModelVersionBodyDto = z
  .strictObject({
    name: singleLineText(200),
    format: z.enum(MODEL_FORMATS).describe(FORMAT_MEANING),
    source: ModelSourceDto,
    projectId: z
      .uuid()
      .optional()
      .describe(
        'The project the version belongs to (a project of this tenant, not archived, where you hold model:write; else 400 ' +
          "VALIDATION_ERROR or 403). Omitted: the source training job's project, else a project-scoped token's own, else " +
          "tenant-wide. A training job of another project is 400 VALIDATION_ERROR: a version draws only on its own project's or " +
          'tenant-wide work',
      ),
  })
  .meta({ id: 'CreateModelVersionBodyDto' })

export const VersionObjectDto = z
  .object({
    key: z.string().describe("Full key in the tenant's general bucket"),
    sizeBytes: z.number().int().nullable().describe('As declared; once ready, as measured'),
    sha256: z.string().nullable().describe('As declared; once ready, as computed'),
  })
  .meta({ id: 'ModelVersionObjectDto' })
export type VersionObject = z.infer<typeof VersionObjectDto>

export const ModelVersionDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    name: z.string(),
    format: z.enum(MODEL_FORMATS).describe(FORMAT_MEANING),
    status: z.enum(MODEL_VERSION_STATUSES).describe('draft → validating → ready | failed; a failed version may be validated again'),
    failureReason: z.string().nullable().describe('failed only: which object and why'),
    source: ModelSourceDto,
    objects: z.array(VersionObjectDto),
    bucket: z.string().nullable().describe('The general bucket the objects were validated in (null before validation)'),
    totalBytes: z.number().int().nullable(),
    validationWorkflowId: z.string().describe('The Temporal workflow id of its validation'),
    validatedAt: z.iso.datetime().nullable(),
    projectId: z.uuid().nullable().describe('The project the version belongs to; null: tenant-wide'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ModelVersionDto' })
export type ModelVersion = z.infer<typeof ModelVersionDto>

export const UploadUrlsDto = z
  .object({
    bucket: z.string(),
    expiresAt: z.iso.datetime(),
    uploads: z.array(
      z.object({ key: z.string(), method: z.literal('PUT'), url: z.string().describe("Presigned: PUT the object's bytes here, no credentials") }),
    ),
  })
  .meta({ id: 'ModelVersionUploadUrlsDto' })

export const ModelVersionParams = z.object({ modelVersionId: z.string() })
export const ListModelVersionsQuery = PageQuery.extend({
  status: z.enum(MODEL_VERSION_STATUSES).optional(),
  format: z.enum(MODEL_FORMATS).optional(),
  projectId: z.uuid().optional().describe("Only this project's versions; a project you do not reach lists nothing"),
})
export type CreateModelVersionInput = z.infer<typeof CreateModelVersionBodyDto>

export const ObjectUploadQuery = z.object({ key: Key.min(1).describe("The full key of one of the version's objects (as in `objects[].key`)") })
export const ObjectUploadDto = z
  .object({
    key: z.string(),
    sizeBytes: z.number().int().describe("Bytes stored, the request's Content-Length"),
  })
  .meta({ id: 'ModelVersionObjectUploadDto' })
