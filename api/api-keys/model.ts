import { z } from 'zod'
import { PERMISSIONS } from '../identity/permissions'
import { PageQuery } from '../platform/pagination'

export const PAT_DEFAULT_DAYS = 90
export const PAT_MAX_DAYS = 366

export const CreateApiKeyBodyDto = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(z.enum(PERMISSIONS)).min(1).describe('Permission points; must lie within your own (the grant ceiling)'),
    expiresAt: z.iso.datetime({ offset: true }).optional().describe(`Default ${PAT_DEFAULT_DAYS} days from now, at most ${PAT_MAX_DAYS}`),
    projectId: z
      .uuid()
      .optional()
      .describe(
        "A project of this tenant: the token then acts only inside it, with project-scope scopes lying within what you hold there; it can do what both its scopes and its member's standing in the project allow, worked out on every use",
      ),
  })
  .meta({ id: 'CreateApiKeyBodyDto' })

export const ApiKeySummaryDto = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().describe('The first characters of the token, for recognising it'),
    tenantId: z.uuid(),
    userId: z.uuid(),
    membershipId: z.uuid(),
    scopes: z.array(z.string()),
    projectId: z.uuid().nullable().describe('The project a project-scoped token acts in; null: tenant-wide'),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKeySummaryDto' })

export const CreateApiKeyResponseDto = z
  .object({
    apiKey: ApiKeySummaryDto,
    token: z.string().describe('Shown once; only its SHA-256 is stored'),
  })
  .meta({ id: 'CreateApiKeyResponseDto' })

export const TokenSelfDto = z
  .object({
    tenantId: z.uuid().nullable(),
    userId: z.uuid(),
    credentialClass: z.enum(['session', 'personal_access_token']),
    credentialId: z.uuid(),
    grantCeiling: z.array(z.string()).nullable().describe('The token scopes; null for a session'),
    effectivePermissions: z.array(z.string()),
    projectScope: z
      .object({
        projectId: z.uuid(),
        membershipExpiresAt: z.iso.datetime().nullable().describe("When the member's project membership ends (null: it does not, or there is none)"),
      })
      .nullable()
      .describe('The project a project-scoped token acts in; null for a tenant-wide token and for a session'),
    expiresAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'TokenSelfDto' })

export const ListApiKeysQuery = PageQuery.extend({
  scope: z.enum(['self', 'tenant']).default('self').describe("self: your own keys in this tenant; tenant: everyone's (apikey:manage)"),
})

export const RevokeMembershipApiKeysResponseDto = z
  .object({
    membershipId: z.uuid(),
    revokedCount: z.number().int().describe('Keys that were live and are revoked now'),
  })
  .meta({ id: 'RevokeMembershipApiKeysResponseDto' })
