import { z } from 'zod'
import { ROLES } from '../identity/permissions'

export const Slug = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/, 'lowercase letters, digits and inner hyphens, 3 to 63 characters')

export const CreateTenantBodyDto = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    slug: Slug,
  })
  .meta({ id: 'CreateTenantBodyDto' })

export const TenantDto = z
  .object({
    id: z.uuid(),
    name: z.string(),
    slug: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'TenantDto' })

export const OwnMembershipDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    userId: z.uuid(),
    role: z.enum(ROLES),
    status: z.enum(['active', 'disabled', 'expired', 'removed']),
  })
  .meta({ id: 'OwnMembershipDto' })

export const CreateTenantResponseEnvelopeSwaggerDto = z
  .object({
    data: z.object({ tenant: TenantDto, membership: OwnMembershipDto }),
    meta: z.object({ requestId: z.string() }),
  })
  .meta({ id: 'CreateTenantResponseEnvelopeSwaggerDto' })
