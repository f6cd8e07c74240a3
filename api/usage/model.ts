import { z } from 'zod'
import { AGGREGATIONS } from './meters'

/** The longest window one summary reads (a year and a day: a yearly invoice fits, with a leap day). */
export const USAGE_SUMMARY_MAX_DAYS = 367

// scope and groupBy are plain strings in the schema so an unknown one answers USAGE_SUMMARY_SCOPE_INVALID (scope) or
// a field error naming it, rather than a schema error without the code.
export const UsageSummaryQuery = z
  .object({
    scope: z
      .string()
      .max(40)
      .default('tenant')
      .meta({ enum: ['tenant', 'project', 'meter'] })
      .describe('tenant: every meter of the tenant; project: one project (projectId); meter: one meter (meter)'),
    from: z.string().max(64).optional().meta({ format: 'date-time' }).describe('Start of the window, inclusive (RFC 3339). Required.'),
    to: z
      .string()
      .max(64)
      .optional()
      .meta({ format: 'date-time' })
      .describe(`End of the window, exclusive (RFC 3339). Required; at most ${USAGE_SUMMARY_MAX_DAYS} days after from.`),
    projectId: z.string().max(64).optional().describe("The project, for scope=project (another tenant's project is NOT_FOUND)"),
    meter: z.string().max(80).optional().describe('The meter, for scope=meter'),
    groupBy: z
      .union([z.string().max(40), z.array(z.string().max(20)).max(4)])
      .optional()
      .describe('project, day (UTC), or both (comma-separated or repeated). Rows are always per meter'),
  })
  .meta({ required: ['from', 'to'] }) // the service names a missing one; the document says both are needed

const Quantity = z.string().regex(/^\d+$/).describe("A whole number of the meter's unit, as decimal digits (exact beyond 2^53)")

export const UsageMeterDto = z
  .object({ meter: z.string(), aggregation: z.enum(AGGREGATIONS), unit: z.string(), description: z.string() })
  .meta({ id: 'UsageMeterDto' })

export const UsageSummaryDto = z
  .object({
    scope: z.enum(['tenant', 'project', 'meter']),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    projectId: z.uuid().nullable(),
    meter: z.string().nullable(),
    groupBy: z.array(z.enum(['project', 'day'])),
    meters: z.array(UsageMeterDto).describe('The meters this summary covers, with their aggregation and unit'),
    totals: z.array(z.object({ meter: z.string(), quantity: Quantity })).describe('One per meter over the whole window'),
    rows: z
      .array(
        z.object({
          meter: z.string(),
          projectId: z.uuid().nullable().describe('With groupBy=project: the project, or null for usage no project carried'),
          day: z.string().nullable().describe('With groupBy=day: the UTC day (YYYY-MM-DD)'),
          quantity: Quantity,
        }),
      )
      .describe('Per meter and the groupBy keys; only groups with events'),
  })
  .meta({ id: 'UsageSummaryDto' })

export type UsageSummary = z.infer<typeof UsageSummaryDto>
