import { z } from 'zod'
import { ROLES } from '../identity/permissions'
import { PageQuery } from '../platform/pagination'

export const MEMBERSHIP_STATUSES = ['active', 'disabled', 'expired', 'removed'] as const
export const MEMBERSHIP_SORTS = ['createdAt', 'email', 'displayName', 'role'] as const

export const CurrentTenantMembershipDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    userId: z.uuid(),
    email: z.string(),
    displayName: z.string().nullable(),
    role: z.enum(ROLES),
    status: z.enum(MEMBERSHIP_STATUSES).describe('expired once expiresAt has passed; removed after DELETE'),
    expiresAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'CurrentTenantMembershipDto' })

export const ListMembershipsQuery = PageQuery.extend({
  sortBy: z.enum(MEMBERSHIP_SORTS).optional().describe('Default createdAt; role sorts by rank (owner first)'),
  sortOrder: z.enum(['asc', 'desc']).optional().describe('Default asc'),
  q: z.string().trim().min(1).max(200).optional().describe('Case-insensitive substring of the email or display name'),
  status: z.enum(MEMBERSHIP_STATUSES).optional().describe('Without it, every membership but removed ones'),
  role: z.enum(ROLES).optional(),
})
export type ListMembershipsQuery = z.infer<typeof ListMembershipsQuery>

export const MembershipListEnvelope = z.object({
  data: z.array(CurrentTenantMembershipDto),
  meta: z.object({ requestId: z.string(), pageSize: z.number().int(), totalCount: z.number().int().describe('Matches of the whole query, every page') }),
  nextPageToken: z.string().optional(),
})

export const UpdateCurrentTenantMembershipBodyDto = z
  .strictObject({
    role: z.enum(ROLES).optional(),
    status: z.enum(['active', 'disabled']).optional().describe('expired follows from expiresAt; removed from DELETE'),
    expiresAt: z.iso.datetime({ offset: true }).nullable().optional().describe('null: never expires'),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of role, status, expiresAt')
  .meta({ id: 'UpdateCurrentTenantMembershipBodyDto', minProperties: 1 })
export type UpdateMembershipBody = z.infer<typeof UpdateCurrentTenantMembershipBodyDto>

export const RemovalResultDto = z.object({ removed: z.literal(true) }).meta({ id: 'RemovalResultDto' })
