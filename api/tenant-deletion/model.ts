import { z } from 'zod'

export const TenantDeletionJobParams = z.object({ jobId: z.string() })

export const StartTenantDeletionBodyDto = z.strictObject({}).meta({ id: 'StartTenantDeletionBodyDto' })

const DsseEnvelopeDto = z
  .object({
    payloadType: z.string(),
    payload: z.string().describe('Base64 of the receipt JSON'),
    signatures: z.array(z.object({ keyid: z.string(), sig: z.string() })),
  })
  .meta({ id: 'TenantDeletionReceiptEnvelopeDto' })

const DeletionReceiptDto = z
  .object({
    version: z.literal(1),
    tenantId: z.uuid(),
    jobId: z.uuid(),
    requestedAt: z.iso.datetime(),
    completedAt: z.iso.datetime(),
    credentials: z.object({
      sessionsRevoked: z.number().int(),
      apiKeysRevoked: z.number().int(),
      ssoConnectionsDisabled: z.number().int(),
      webhookEndpointsDisabled: z.number().int(),
      finalEventId: z.uuid().nullable(),
    }),
    tables: z.array(z.object({ table: z.string(), rowsDeleted: z.number().int(), remaining: z.number().int() })),
    retained: z.array(z.object({ table: z.string(), reason: z.string() })),
    buckets: z.array(z.object({ kind: z.string(), bucket: z.string().nullable(), objectsDeleted: z.number().int(), exists: z.boolean() })),
    backups: z.object({ retentionDays: z.number().int(), lastBackupExpiresAt: z.iso.datetime() }),
  })
  .meta({ id: 'TenantDeletionReceiptDto' })

export const TenantDeletionJobDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    status: z.enum(['queued', 'running', 'blocked', 'failed', 'succeeded']),
    trigger: z.enum(['request', 'window_elapsed']).describe('request: an owner started it; window_elapsed: the retention window ended'),
    workflowId: z.string(),
    progress: z.object({
      phase: z.enum(['credentials', 'buckets', 'rows', 'receipt', 'done']),
      step: z.string().nullable().describe('The table or bucket kind being deleted now'),
      stepIndex: z.number().int(),
      steps: z.number().int().describe('Steps of the current phase'),
      rowsDeleted: z.number().int(),
      objectsDeleted: z.number().int(),
      counts: z.record(z.string(), z.number()).describe('table:<name> rows, bucket:<kind> object versions, credential:<kind> revoked'),
    }),
    attempts: z.number().int().describe('Workflow runs that have claimed the job (a retry adds one)'),
    blockedReason: z.string().nullable(),
    error: z.string().nullable(),
    receipt: z
      .object({ sha256: z.string(), envelope: DsseEnvelopeDto, receipt: DeletionReceiptDto })
      .nullable()
      .describe('The signed receipt, once the job succeeded; verify the envelope with GET /v1/edge-inference-packages/signing-keys'),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'TenantDeletionJobDto' })

export type TenantDeletionJob = z.infer<typeof TenantDeletionJobDto>
