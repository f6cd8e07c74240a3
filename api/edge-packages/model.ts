import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { DEFAULT_TARGET_ARCH, imageLines, targetArchs } from './image-lines'

export const STEPS_DEFAULT = 1000
export const WIRE_PROTOCOLS = ['openpi-ws', 'lerobot-grpc'] as const
/** In local mode the package serves the model itself, over the protocol its format's server speaks. */
export const LOCAL_SERVER_PROTOCOL = { onnx: 'openpi-ws', openpi: 'openpi-ws', lerobot: 'lerobot-grpc' } as const
/** The image lines that ship LeRobot, the only ones lerobot-grpc is built for. */
export const LEROBOT_ARCHS = targetArchs.filter((a) => imageLines[a].hasLeRobot)
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[?[0-9A-Fa-f:.]+\]?)$/

export const EdgeInferencePackageRequestDto = z
  .strictObject({
    embodimentProfileId: z.uuid().describe('The embodiment profile (observation and action contract) the package is built for'),
    mode: z
      .enum(['local', 'remote_ws'])
      .describe('local: policy server and robot client on the device; remote_ws: the robot client only, pointed at remotePolicyHost:remotePolicyPort'),
    strategyKey: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9._:/@+-]+$/)
      .optional()
      .describe('Carried into the manifest for the runtime to choose its action strategy'),
    remotePolicyHost: z.string().min(1).max(253).regex(HOST).optional().describe('Required with mode remote_ws: a host name or IP address'),
    remotePolicyPort: z.number().int().min(1).max(65535).optional().describe('Required with mode remote_ws'),
    steps: z.number().int().min(1).max(100_000).default(STEPS_DEFAULT).describe(`Steps a run drives; default ${STEPS_DEFAULT}`),
    targetArch: z
      .enum(targetArchs)
      .default(DEFAULT_TARGET_ARCH)
      .describe(
        `Names the base image line; default ${DEFAULT_TARGET_ARCH}. ${targetArchs.map((a) => `${a}: ${imageLines[a].baseImage} (${imageLines[a].platform})`).join('; ')}`,
      ),
    wireProtocols: z
      .array(z.enum(WIRE_PROTOCOLS))
      .min(1)
      .meta({ uniqueItems: true })
      .default(['openpi-ws'])
      .describe(
        'Default ["openpi-ws"]; lerobot-grpc only on image lines that ship LeRobot (x86-cuda, jetson-jp6). In local mode the list must ' +
          "include the protocol of the model's own server: openpi-ws for onnx and openpi, lerobot-grpc for lerobot (else VALIDATION_ERROR)",
      ),
    useFakeTransport: z.boolean().default(false).describe('The robot client drives `steps` synthetic observations instead of hardware'),
  })
  .superRefine((b, ctx) => {
    if (b.mode === 'remote_ws') {
      if (b.remotePolicyHost === undefined) ctx.addIssue({ code: 'custom', path: ['remotePolicyHost'], message: 'required with mode remote_ws' })
      if (b.remotePolicyPort === undefined) ctx.addIssue({ code: 'custom', path: ['remotePolicyPort'], message: 'required with mode remote_ws' })
    }
    if (b.wireProtocols.includes('lerobot-grpc') && !imageLines[b.targetArch].hasLeRobot) {
      ctx.addIssue({ code: 'custom', path: ['wireProtocols'], message: `lerobot-grpc is not available on the ${b.targetArch} image line` })
    }
    if (new Set(b.wireProtocols).size !== b.wireProtocols.length)
      ctx.addIssue({ code: 'custom', path: ['wireProtocols'], message: 'each protocol at most once' })
  })
  // The two modes as the document's variants (the refinement above decides, with its field errors): a generated
  // client asks for the policy server's address exactly when the mode needs one.
  // And the image line rule: lerobot-grpc needs a line that ships LeRobot, which the default (cpu) does not.
  .meta({
    id: 'EdgeInferencePackageRequestDto',
    if: { properties: { wireProtocols: { contains: { const: 'lerobot-grpc' } } }, required: ['wireProtocols'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's own if/then keywords, never awaited
    then: { properties: { targetArch: { enum: LEROBOT_ARCHS } }, required: ['targetArch'] },
    oneOf: [
      { properties: { mode: { const: 'local' } }, required: ['mode'] },
      { properties: { mode: { const: 'remote_ws' } }, required: ['mode', 'remotePolicyHost', 'remotePolicyPort'] },
    ],
  })
export type PackageRequestInput = z.infer<typeof EdgeInferencePackageRequestDto>

export const ImageLineDto = z
  .object({
    baseImage: z.string(),
    platform: z.enum(['linux/amd64', 'linux/arm64']),
    description: z.string(),
    hasLeRobot: z.boolean(),
  })
  .meta({ id: 'EdgePackageImageLineDto' })

export const EdgeInferencePackageDto = z
  .object({
    id: z.uuid(),
    status: z.enum(['queued', 'building', 'ready', 'failed']),
    failureReason: z.string().nullable(),
    modelVersionId: z.uuid(),
    embodimentProfileId: z.uuid(),
    mode: z.enum(['local', 'remote_ws']),
    strategyKey: z.string().nullable(),
    remotePolicyHost: z.string().nullable(),
    remotePolicyPort: z.number().int().nullable(),
    steps: z.number().int(),
    targetArch: z.enum(targetArchs),
    imageLine: ImageLineDto,
    wireProtocols: z.array(z.object({ name: z.enum(WIRE_PROTOCOLS), port: z.number().int() })),
    useFakeTransport: z.boolean(),
    workflowId: z.string().describe('The Temporal workflow building it (search TenantId in the Temporal UI)'),
    progress: z.object({ bytesDone: z.number().int(), bytesTotal: z.number().int().nullable() }).describe('Model bytes packed so far'),
    artifact: z
      .object({
        bucket: z.string(),
        key: z.string(),
        sizeBytes: z.number().int(),
        sha256: z.string(),
        downloadUrl: z.string().describe('Presigned GET of the tar.gz; short-lived (PACKAGE_DOWNLOAD_URL_SECONDS, 15 minutes by default)'),
        downloadUrlExpiresAt: z.iso.datetime(),
      })
      .nullable()
      .describe('Present once status is ready'),
    projectId: z.uuid().nullable().describe("Additive: the project the package belongs to, always its model version's (null: tenant-wide)"),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'EdgeInferencePackageDto' })
export type EdgeInferencePackage = z.infer<typeof EdgeInferencePackageDto>

export const PackageParams = z.object({ packageId: z.string() })
export const ModelVersionParams = z.object({ modelVersionId: z.string() })
export const ListPackagesQuery = PageQuery.extend({
  modelVersionId: z.uuid().optional(),
  status: z.enum(['queued', 'building', 'ready', 'failed']).optional(),
  projectId: z.uuid().optional().describe("Additive: only this project's packages; a project you do not reach lists nothing"),
})

const iso = z.iso.datetime({ offset: true })
export const EdgePackageRunReportDto = z
  .strictObject({
    stepsDone: z.number().int().min(0).max(1_000_000_000),
    latencyMs: z.strictObject({ p50: z.number().min(0).max(86_400_000), p99: z.number().min(0).max(86_400_000) }).nullable(),
    contractViolations: z.number().int().min(0).max(1_000_000_000),
    inferences: z.number().int().min(0).max(1_000_000_000).optional().describe('Action chunks requested (one per chunk, not per step)'),
    underruns: z.number().int().min(0).max(1_000_000_000).optional().describe('Ticks whose action came too late: the robot held its last action'),
    queueDepth: z
      .strictObject({ max: z.number().int().min(0).max(1_000_000_000), mean: z.number().min(0).max(1_000_000_000) })
      .nullable()
      .optional()
      .describe('Actions queued at each tick; null when no tick ran'),
    loopJitterMs: z
      .strictObject({ p99: z.number().min(0).max(86_400_000) })
      .nullable()
      .optional()
      .describe('Deviation of tick intervals from the control period; null when unthrottled'),
    exitReason: z
      .enum(['completed', 'contract_violation', 'server_error', 'connection_lost', 'not_runnable', 'interrupted'])
      .describe("not_runnable: the package's real transport is not wired (runtime/robot_io.py), so no step ran"),
    violations: z.array(z.strictObject({ feature: z.string().max(200), expected: z.string().max(500), got: z.string().max(500) })).max(20),
    startedAt: iso,
    finishedAt: iso,
  })
  .meta({ id: 'EdgePackageRunReportDto' })

export const EdgePackageRunDto = EdgePackageRunReportDto.extend({
  inferences: z.number().int().nullable().describe('null: reported by a package built before chunked control'),
  underruns: z.number().int().nullable(),
  queueDepth: z.object({ max: z.number().int(), mean: z.number() }).nullable(),
  loopJitterMs: z.object({ p99: z.number() }).nullable(),
  id: z.uuid(),
  packageId: z.uuid(),
  reportedBy: z.uuid().describe('The user whose token reported it'),
  createdAt: z.iso.datetime(),
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
}).meta({ id: 'EdgePackageRunDto' })
export const ListRunsQuery = PageQuery

export const PackageSigningKeyDto = z
  .object({
    keyId: z.string().describe('First 16 hex characters of the SHA-256 of the raw 32-byte public key; the DSSE signature keyid'),
    algorithm: z.literal('ed25519'),
    publicKeyPem: z.string().describe('SubjectPublicKeyInfo PEM, for `openssl pkeyutl -verify -pubin`'),
    publicKeyBase64: z.string().describe('The raw 32-byte public key'),
    current: z.boolean().describe('false: a previous key, still listed so packages signed before a rotation verify'),
  })
  .meta({ id: 'PackageSigningKeyDto' })
