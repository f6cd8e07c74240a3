import { randomBytes } from 'node:crypto'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { currentMembership, type Principal } from '../identity/service'
import { lookupTxt } from './dns'
import { CHALLENGE_LABEL } from './model'
import {
  deleteTenantDomain, findTenantDomain, findTenantsVerifyingDomain, insertTenantDomain, listTenantDomains, markTenantDomainVerified,
  type TenantDomainRow,
} from './queries'

export const recordNameOf = (domain: string) => `${CHALLENGE_LABEL}.${domain}`

export const toTenantDomainDto = (r: TenantDomainRow) => ({
  id: r.id, domain: r.domain, status: r.verified_at ? 'verified' as const : 'pending' as const,
  verificationRecord: { type: 'TXT' as const, name: recordNameOf(r.domain), value: `rcp-domain-verification=${r.challenge_token}` },
  verifiedAt: r.verified_at?.toISOString() ?? null, createdAt: r.created_at.toISOString(),
})

const notFound = () => new ApiError('NOT_FOUND', 'No domain with this id in the current tenant')

export async function addDomain({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, domain: string) {
  return insertTenantDomain(sql, currentMembership(principal).tenantId, domain, randomBytes(24).toString('base64url'))
}

export async function listDomains({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, principal: Principal, q: PageParams) {
  const { tenantId } = currentMembership(principal)
  const binding = { route: 'GET /tenants/current/domains', scope: `tenant:${tenantId}`, filters: {} }
  const p = await paginate(keys.page, binding, q, (after, limit) => listTenantDomains(sql, tenantId, after, limit), createdCursorOf)
  return mapPage(p, toTenantDomainDto)
}

export async function removeDomain({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string) {
  const row = isUuid(id) ? await deleteTenantDomain(sql, currentMembership(principal).tenantId, id) : undefined
  if (!row) throw notFound()
  return row
}

const uniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505'

/** Looks the TXT record up now. A domain another tenant holds verified stays theirs until they delete it. */
export async function verifyDomain({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, principal: Principal, id: string) {
  const { tenantId } = currentMembership(principal)
  const row = isUuid(id) ? await findTenantDomain(sql, tenantId, id) : undefined
  if (!row) throw notFound()
  if (row.verified_at) return row
  const name = recordNameOf(row.domain)
  const expected = toTenantDomainDto(row).verificationRecord.value
  const txt = await lookupTxt(config, name)
  if (!txt.found) {
    throw new ApiError('BAD_REQUEST', txt.reason === 'no-record'
      ? `No TXT record is published at ${name} yet; publish it and retry (DNS changes can take a while to appear)`
      : `The TXT records at ${name} could not be looked up now; retry later`)
  }
  if (!txt.values.includes(expected)) {
    throw new ApiError('BAD_REQUEST', `${txt.values.length} TXT record(s) at ${name}, none with the expected value; publish it exactly and retry`)
  }
  const verified = await markTenantDomainVerified(sql, tenantId, row.id).catch((err) => (uniqueViolation(err) ? undefined : Promise.reject(err)))
  if (!verified) throw new ApiError('BAD_REQUEST', `${row.domain} is verified by another tenant; it must remove its claim first`)
  return verified
}

/** Whether `tenantId` has proven control of `domain`. */
export async function domainVerifiedFor(db: Db, tenantId: string, domain: string): Promise<boolean> {
  return (await findTenantsVerifyingDomain(db, domain)).includes(tenantId)
}

