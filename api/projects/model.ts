import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { singleLineText } from '../platform/text'

// A DNS label's shape, so a slug can later name things outside the API (hostnames, prefixes) unchanged.
const Slug = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'lowercase letters, digits and hyphens (1 to 63), starting and ending with a letter or digit')
  .describe('Unique within the tenant, archived projects included')
const Description = z.string().max(2000).describe('Free text, up to 2000 characters')

export const CreateProjectBodyDto = z
  .strictObject({
    name: singleLineText(100),
    slug: Slug,
    description: Description.optional(),
  })
  .meta({ id: 'CreateProjectBodyDto' })

export const UpdateProjectBodyDto = z
  .strictObject({
    name: singleLineText(100).optional(),
    slug: Slug.optional(),
    description: Description.nullable().optional().describe('null clears it'),
  })
  .meta({ id: 'UpdateProjectBodyDto' })

export const ProjectDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    name: z.string(),
    slug: z.string(),
    description: z.string().nullable(),
    createdBy: z.uuid().nullable().describe('The user who created it'),
    archived: z.boolean(),
    archivedAt: z.iso.datetime().nullable(),
    version: z.number().int().describe('The row version; the ETag is `"v<version>"`'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ProjectDto' })

export const ProjectParams = z.object({ projectId: z.string() })
export const ListProjectsQuery = PageQuery.extend({
  archived: z.enum(['true', 'false']).optional().describe('Only archived (`true`) or only active (`false`) projects; both when absent'),
})

export type CreateProjectInput = z.infer<typeof CreateProjectBodyDto>
export type UpdateProjectInput = z.infer<typeof UpdateProjectBodyDto>
export type Project = z.infer<typeof ProjectDto>
