// The event catalogue: every type a tenant can subscribe to, with the schema of its `data`. The OpenAPI document
// publishes it under `webhooks`, publishEvent checks producers against it, and every type has a real producer.
import { z } from 'zod'

const uuid = z.uuid()
const sha256 = z.string().regex(/^[0-9a-f]{64}$/)
const modelFormat = z.enum(['openpi', 'lerobot', 'onnx'])
const sourceKind = z.enum(['imported_checkpoint', 'model_bundle', 'training_job'])
const targetArch = z.enum(['x86-cuda', 'jetson-jp6', 'cpu'])
const mode = z.enum(['local', 'remote_ws'])
const reason = z.string().max(1000)
// Additive (issue 36): the project the work belongs to, null for tenant-wide work. Always in the payload (the parse
// fills null in); every producer of these types names it.
const projectId = uuid.nullable().default(null)

const entry = <S extends z.ZodType>(summary: string, data: S) => ({ summary, data })

export const eventCatalogue = {
  'model_version.ready': entry(
    'A model version passed validation and can be packaged.',
    z.object({ modelVersionId: uuid, name: z.string(), format: modelFormat, sourceKind, totalBytes: z.number().int().nonnegative(), projectId }),
  ),
  'model_version.failed': entry(
    'A model version failed validation; `reason` says which object and why.',
    z.object({ modelVersionId: uuid, name: z.string(), format: modelFormat, sourceKind, reason, projectId }),
  ),
  'edge_package.ready': entry(
    'An edge inference package was built, signed and stored.',
    z.object({
      packageId: uuid,
      modelVersionId: uuid,
      embodimentProfileId: uuid,
      targetArch,
      mode,
      sizeBytes: z.number().int().nonnegative(),
      sha256,
      projectId,
    }),
  ),
  'edge_package.failed': entry(
    'An edge inference package build failed for good.',
    z.object({ packageId: uuid, modelVersionId: uuid, embodimentProfileId: uuid, targetArch, mode, reason, projectId }),
  ),
  'training_job.completed': entry(
    'A training job finished; its output artifact can become a model version.',
    z.object({ trainingJobId: uuid, name: z.string(), outputArtifactPath: z.string().nullable(), projectId }),
  ),
  'training_job.failed': entry('A training job failed.', z.object({ trainingJobId: uuid, name: z.string(), reason, projectId })),
  'run.finished': entry(
    "A package's robot-side client reported a finished run.",
    z.object({
      packageId: uuid,
      runId: uuid,
      stepsDone: z.number().int().nonnegative(),
      exitReason: z.string(),
      contractViolations: z.number().int().nonnegative(),
      latencyMs: z.object({ p50: z.number().nonnegative(), p99: z.number().nonnegative() }).nullable(),
      projectId,
    }),
  ),
  'storage.provisioned': entry(
    "The tenant's storage buckets are ready.",
    z.object({ regionId: z.string(), buckets: z.array(z.object({ kind: z.enum(['general', 'dataset', 'export']), name: z.string() })) }),
  ),
  'storage_reconciliation.completed': entry(
    'A storage reconciliation job ended (succeeded or failed).',
    z.object({
      jobId: uuid,
      status: z.enum(['succeeded', 'failed']),
      objectsScanned: z.number().int().nonnegative().nullable(),
      orphans: z.number().int().nonnegative().nullable(),
      missing: z.number().int().nonnegative().nullable(),
      errorCode: z.string().nullable(),
    }),
  ),
  'webhook_endpoint.disabled': entry(
    "One of the tenant's webhook endpoints was disabled (410 Gone, or failing for too long).",
    z.object({ endpointId: uuid, url: z.string(), reason: z.enum(['gone', 'failing']), disabledAt: z.iso.datetime() }),
  ),
  'audit.entry': entry(
    "One entry of the tenant's audit trail, as GET /v1/tenants/current/audit-log shows it: subscribe a SIEM to receive the trail as it is written.",
    z.object({
      id: uuid,
      seq: z.number().int().positive(),
      occurredAt: z.iso.datetime(),
      tenantId: uuid.nullable(),
      actor: z.object({
        type: z.enum(['user', 'api_key', 'system', 'anonymous']),
        id: z.string().nullable(),
        label: z.string().nullable(),
        credentialId: uuid.nullable(),
      }),
      action: z.string(),
      target: z.object({ type: z.string(), id: z.string().nullable() }).nullable(),
      outcome: z.enum(['success', 'failure']),
      reason: z.string().nullable(),
      ip: z.string().nullable(),
      userAgent: z.string().nullable(),
      requestId: z.string().nullable(),
      changes: z.record(z.string(), z.unknown()).nullable(),
      details: z.record(z.string(), z.unknown()).nullable(),
      hash: sha256,
    }),
  ),
  'tenant.deleted': entry(
    'The tenant is being deleted: the last event its endpoints receive, sent to every enabled endpoint whatever it subscribes to, before they are disabled and removed.',
    z.object({ tenantId: uuid, deletionJobId: uuid }),
  ),
  'invoice.finalized': entry(
    "A period's invoice was finalized: an immutable snapshot; amounts are integer minor units of `currency`, as decimal strings.",
    z.object({ invoiceId: uuid, period: z.string(), currency: z.string(), total: z.string().regex(/^-?\d+$/), hash: sha256 }),
  ),
  'subscription.updated': entry(
    "The tenant's subscription changed: its plan, status or cancel-at-period-end.",
    z.object({
      subscriptionId: uuid,
      planId: z.string(),
      status: z.enum(['trialing', 'active', 'past_due', 'unpaid', 'canceled', 'paused']),
      previousStatus: z.enum(['trialing', 'active', 'past_due', 'unpaid', 'canceled', 'paused']),
      cancelAtPeriodEnd: z.boolean(),
    }),
  ),
  'billing.blocked': entry(
    'The tenant is billing-blocked: operations that start new work answer 400 BILLING_BLOCKED; reads keep working.',
    z.object({ reasons: z.array(z.enum(['unpaid', 'canceled', 'paused', 'operator'])) }),
  ),
  'billing.unblocked': entry('The billing block was lifted: new work is accepted again.', z.object({ subscriptionId: uuid })),
  'webhook_endpoint.test': entry(
    'Sent on request to one endpoint, to check that it receives and verifies deliveries.',
    z.object({ endpointId: uuid, note: z.string() }),
  ),
} as const

export type EventType = keyof typeof eventCatalogue
export type EventData<T extends EventType> = z.input<(typeof eventCatalogue)[T]['data']>
export const eventTypes = Object.keys(eventCatalogue) as EventType[]

/** What every delivery carries (Standard Webhooks payload): `data` is the type's schema above. */
export interface EventEnvelope<T extends EventType = EventType> {
  id: string
  type: T
  timestamp: string
  tenantId: string
  data: EventData<T>
}
