import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { Domain } from '../sso/model'

/** The TXT record a tenant publishes to prove it controls a domain lives at `_rcp-challenge.<domain>`. */
export const CHALLENGE_LABEL = '_rcp-challenge'

export const TenantDomainDto = z
  .object({
    id: z.uuid(),
    domain: z.string(),
    status: z.enum(['pending', 'verified']).describe('verified: the TXT record was found; only verified domains count for single sign-on'),
    verificationRecord: z.object({
      type: z.literal('TXT'),
      name: z.string().describe('Where to publish the record'),
      value: z.string().describe('The exact value to publish'),
    }),
    verifiedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'TenantDomainDto' })

export const CreateTenantDomainRequestDto = z.strictObject({ domain: Domain }).meta({ id: 'CreateTenantDomainRequestDto' })
export const ListTenantDomainsQuery = PageQuery
