import { z } from 'zod'

export const OffboardingBlockerDto = z
  .object({
    code: z.enum(['OFFBOARDING_BLOCKED_BY_LINEAGE']).describe('The error code a new request would answer for it'),
    message: z.string(),
    modelVersionIds: z.array(z.uuid()).describe('The model versions robots still run (lineage)'),
  })
  .meta({ id: 'OffboardingBlockerDto' })

export const TenantExportDto = z
  .object({
    status: z.enum(['pending', 'ready', 'failed']),
    rows: z.number().int().nullable().describe("Rows of the tenant's tables in the export"),
    objects: z.number().int().nullable().describe("Objects of the tenant's buckets listed in the object manifest"),
    manifestSha256: z.string().nullable().describe("SHA-256 of the signed manifest's payload"),
    readyAt: z.iso.datetime().nullable(),
    error: z.string().nullable(),
    download: z
      .object({
        rows: z.string().describe('Presigned link: every row of the tenant, gzip NDJSON, one `{table, row}` a line'),
        objects: z.string().describe('Presigned link: every object of its buckets with size and SHA-256, gzip NDJSON'),
        manifest: z.string().describe('Presigned link: the DSSE envelope of the manifest, signed with the edge-package key'),
        expiresAt: z.iso.datetime(),
      })
      .nullable()
      .describe('Fresh links on every read, while the export is ready'),
  })
  .meta({ id: 'TenantExportDto' })

export const OffboardingRequestDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    state: z.enum(['open', 'window_elapsed']).describe('open: the window runs and DELETE reactivates; window_elapsed: deletion may start'),
    requestedBy: z.uuid().nullable(),
    retentionDays: z.number().int(),
    windowEndsAt: z.iso.datetime(),
    workflowId: z.string(),
    export: TenantExportDto,
    blockers: z.array(OffboardingBlockerDto).describe('What would refuse a new request today (robots still running its models)'),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'OffboardingRequestDto' })

export const CancelledOffboardingDto = z
  .object({
    id: z.uuid(),
    state: z.literal('cancelled'),
    cancelledAt: z.iso.datetime(),
    tenantLifecycle: z.literal('active'),
  })
  .meta({ id: 'CancelledOffboardingDto' })

export type OffboardingRequest = z.infer<typeof OffboardingRequestDto>
export type OffboardingBlocker = z.infer<typeof OffboardingBlockerDto>
