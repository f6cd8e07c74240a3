import { z } from 'zod'
import { PERMISSIONS, PROJECT_ROLES } from '../identity/permissions'
import { PageQuery } from '../platform/pagination'

// A point the catalogue does not know is a malformed request (400 VALIDATION_ERROR naming it); a known point in the
// wrong place (a tenant-scope point, one granted and denied) is a refused overlay, decided by the service.
const Point = z.enum(PERMISSIONS, { error: (iss) => `unknown permission point ${JSON.stringify(iss.input)}` })
// The catalogue has a handful of project points: more entries than points can only be repeats or noise, and
// bounding them keeps a 10,000-entry body a plain 400.
const MAX_OVERLAY_ENTRIES = PERMISSIONS.length

export const OverlayDto = z
  .strictObject({
    grant: z.array(Point).max(MAX_OVERLAY_ENTRIES).default([]).describe('Project-scope points added to what the roles give'),
    deny: z.array(Point).max(MAX_OVERLAY_ENTRIES).default([]).describe('Project-scope points taken away (not from tenant owners and admins)'),
  })
  .meta({ id: 'ProjectMemberOverlayDto' })

const ExpiresAt = z.iso.datetime({ offset: true }).describe('When the project membership ends; in the future')

export const AddProjectMemberBodyDto = z
  .strictObject({
    userId: z.uuid().describe('A member of this tenant'),
    role: z.enum(PROJECT_ROLES),
    overlay: OverlayDto.optional(),
    expiresAt: ExpiresAt.optional(),
  })
  .meta({ id: 'AddProjectMemberBodyDto' })

export const UpdateProjectMemberBodyDto = z
  .strictObject({
    role: z.enum(PROJECT_ROLES).optional(),
    overlay: OverlayDto.optional().describe('Replaces the overlay whole'),
    expiresAt: ExpiresAt.nullable().optional().describe('null: never expires'),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of role, overlay, expiresAt')
  .meta({ id: 'UpdateProjectMemberBodyDto', minProperties: 1 })

export const ProjectMemberDto = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    userId: z.uuid(),
    membershipId: z.uuid().describe('The tenant membership it rests on'),
    email: z.string(),
    tenantRole: z.string().describe('The tenant role, whose project-scope points hold in every project'),
    role: z.enum(PROJECT_ROLES),
    overlay: z.object({ grant: z.array(z.string()), deny: z.array(z.string()) }),
    effectivePermissions: z.array(z.string()).describe('What the member holds in this project now (none once expired)'),
    expiresAt: z.iso.datetime().nullable(),
    expired: z.boolean(),
    grantedBy: z.uuid().nullable().describe('The user who added the member or last changed the membership'),
    version: z.number().int().describe('The row version; the ETag is `"v<version>"`'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ProjectMemberDto' })

export const ProjectMemberParams = z.object({ projectId: z.string(), userId: z.string() })
export const ListProjectMembersQuery = PageQuery

export type AddProjectMemberInput = z.infer<typeof AddProjectMemberBodyDto>
export type UpdateProjectMemberInput = z.infer<typeof UpdateProjectMemberBodyDto>
export type ProjectMember = z.infer<typeof ProjectMemberDto>
