import { z } from 'zod'
import { eventCatalogue } from '../events/catalogue'
import { PageQuery } from '../platform/pagination'

/** An entry as every reader sees it: the API, the export's lines and the `audit.entry` event are one shape. */
export const AuditEntryDto = eventCatalogue['audit.entry'].data.meta({ id: 'AuditEntryDto' })

// from and to are plain strings in the schema so a missing or unparsable one answers the audit log's own codes
// (AUDIT_LOG_TIME_RANGE_REQUIRED, AUDIT_LOG_INVALID_TIME_RANGE) rather than a generic VALIDATION_ERROR.
// The document states what the service checks (both named, RFC 3339), through zod's metadata, which reaches the
// JSON Schema only: validation stays the service's.
const instant = (what: string) => z.string().max(64).optional().describe(`${what} (RFC 3339). Required.`).meta({ format: 'date-time' })
const WINDOW_REQUIRED = { required: ['from', 'to'] }
const TimeRange = { from: instant('Start of the window, inclusive'), to: instant('End of the window, exclusive') }

export const ListAuditLogQuery = PageQuery.extend({
  ...TimeRange,
  actorId: z.string().min(1).max(200).optional().describe("The actor's id: a user id, or a workflow id for the system"),
  action: z
    .string()
    .regex(/^[a-z_.]{1,80}$/)
    .optional()
    .describe('An action, or a prefix of one ending in a dot ("membership.")'),
  targetType: z
    .string()
    .regex(/^[a-z_]{1,40}$/)
    .optional(),
  targetId: z.string().min(1).max(200).optional(),
  outcome: z.enum(['success', 'failure']).optional(),
}).meta(WINDOW_REQUIRED)

export const AuditTimeRangeBodyDto = z.strictObject(TimeRange).meta({ id: 'AuditTimeRangeBodyDto', ...WINDOW_REQUIRED })

export const AuditVerificationDto = z
  .object({
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    verified: z.number().int().nonnegative().describe('Entries in the window whose link was recomputed'),
    firstSeq: z.number().int().nullable(),
    lastSeq: z.number().int().nullable(),
    intact: z.boolean(),
    firstBrokenSeq: z
      .number()
      .int()
      .nullable()
      .describe(
        "The first entry whose hash or sequence does not follow from its predecessor; or, when entries are missing after the window's last entry (or around an empty window), the first sequence number the chain cannot account for",
      ),
    head: z.object({ seq: z.number().int(), hash: z.string().nullable() }).nullable().describe("The chain's newest entry now"),
  })
  .meta({ id: 'AuditVerificationDto' })

export const SecurityActivityQuery = PageQuery

export const AuditExportParams = z.object({ exportId: z.string() })

export const AuditExportDto = z
  .object({
    id: z.uuid(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed']),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    entriesWritten: z.number().int().nonnegative().describe('Entries written so far; when succeeded, the entries in the file'),
    bytes: z.number().int().nonnegative().nullable().describe('Size of the gzip file, once written'),
    sha256: z.string().nullable().describe('SHA-256 of the gzip file (hex), once written'),
    chainHead: z
      .object({ seq: z.number().int().nonnegative(), hash: z.string().nullable() })
      .nullable()
      .describe("The chain's head when the export was cut; the file's trailer line repeats it"),
    error: z.string().nullable(),
    workflowId: z.string(),
    download: z
      .object({ url: z.string(), expiresAt: z.iso.datetime() })
      .nullable()
      .describe('A presigned GET of the gzip NDJSON file, valid 15 minutes from this answer; null until the export succeeded'),
    createdAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'AuditExportDto' })

export type AuditExport = z.infer<typeof AuditExportDto>
