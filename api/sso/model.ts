import { z } from 'zod'
import { PageQuery } from '../platform/pagination'

// Just-in-time members get this role; never owner, which only an owner grants by hand.
export const SSO_ROLES = ['admin', 'researcher', 'billing_admin', 'viewer'] as const
export const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a DNS domain such as example.com')
const Issuer = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .describe('The OpenID Provider issuer; discovery reads <issuer>/.well-known/openid-configuration')

export const TenantSsoConnectionDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    protocol: z.enum(['oidc']).describe('Room for saml later'),
    name: z.string(),
    issuer: z.string(),
    clientId: z.string(),
    clientSecretSet: z.literal(true).describe('The client secret is write-only: stored encrypted, never returned'),
    emailDomains: z.array(z.string()),
    defaultRole: z.enum(SSO_ROLES),
    enabled: z.boolean(),
    signInUrl: z.string().describe('Where a browser starts sign-in with this connection'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'TenantSsoConnectionDto' })

export const CreateTenantSsoConnectionRequestDto = z
  .strictObject({
    protocol: z.literal('oidc').default('oidc'),
    name: z.string().trim().min(1).max(200).optional(),
    issuer: Issuer,
    clientId: z.string().min(1).max(512),
    clientSecret: z.string().min(1).max(2048),
    emailDomains: z.array(Domain).max(50).default([]).describe('Addresses of these domains may join just in time; empty: any address'),
    defaultRole: z.enum(SSO_ROLES).default('viewer'),
    enabled: z.boolean().default(true),
  })
  .meta({ id: 'CreateTenantSsoConnectionRequestDto' })

export const UpdateTenantSsoConnectionRequestDto = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    issuer: Issuer.optional(),
    clientId: z.string().min(1).max(512).optional(),
    clientSecret: z.string().min(1).max(2048).optional().describe('Replaces the stored secret'),
    emailDomains: z.array(Domain).max(50).optional(),
    defaultRole: z.enum(SSO_ROLES).optional(),
    enabled: z.boolean().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one field')
  .meta({ id: 'UpdateTenantSsoConnectionRequestDto' })

export type CreateSsoConnection = z.infer<typeof CreateTenantSsoConnectionRequestDto>
export type UpdateSsoConnection = z.infer<typeof UpdateTenantSsoConnectionRequestDto>
export const ListSsoConnectionsQuery = PageQuery

export const SsoIdentityDto = z
  .object({
    id: z.uuid(),
    connectionId: z.uuid(),
    connectionName: z.string(),
    tenantId: z.uuid().describe('The tenant whose connection asserted this identity'),
    subject: z.string().describe("The provider's subject (sub) for you"),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'SsoIdentityDto' })

export const SsoLinkRequestBodyDto = z
  .strictObject({
    connectionId: z.uuid(),
    returnTo: z.string().max(2048).optional().describe('A path on this site to land on afterwards'),
  })
  .meta({ id: 'SsoLinkRequestBodyDto' })

export const SsoLinkRequestDto = z
  .object({
    authorizationUrl: z.string().describe("Send the browser here (the provider); the callback links the provider's identity to you"),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'SsoLinkRequestDto' })
