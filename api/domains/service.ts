import { randomBytes } from 'node:crypto'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { tenantOf, type RequestContext } from '../identity/context'
import { recordAudit } from '../audit/service'
import { lookupTxt } from './dns'
import { CHALLENGE_LABEL } from './model'
import {
  deleteTenantDomain,
  findTenantDomain,
  findTenantsVerifyingDomain,
  insertTenantDomain,
  listTenantDomains,
  markTenantDomainVerified,
  type TenantDomainRow,
} from './queries'

export const recordNameOf = (domain: string) => `${CHALLENGE_LABEL}.${domain}`

export const toTenantDomainDto = (r: TenantDomainRow) => ({
  id: r.id,
  domain: r.domain,
  status: r.verified_at ? ('verified' as const) : ('pending' as const),
  verificationRecord: { type: 'TXT' as const, name: recordNameOf(r.domain), value: `rcp-domain-verification=${r.challenge_token}` },
  verifiedAt: r.verified_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
})

const notFound = () => new ApiError('NOT_FOUND', 'No domain with this id in the current tenant')

const domainTarget = (r: TenantDomainRow) => ({ type: 'domain', id: r.id })

/** Adding a domain the tenant lists already answers that claim and records nothing new. */
export async function addDomain({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, domain: string) {
  const { tenantId } = tenantOf(ctx)
  return sql.begin(async (tx) => {
    const row = await insertTenantDomain(tx, tenantId, domain, randomBytes(24).toString('base64url'))
    if (row.inserted) await recordAudit(tx, ctx, { action: 'domain.added', tenantId, target: domainTarget(row), details: { domain: row.domain } })
    return row
  })
}

export async function listDomains({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, q: PageParams) {
  const { tenantId } = tenantOf(ctx)
  const binding = { route: 'GET /tenants/current/domains', scope: `tenant:${tenantId}`, filters: {} }
  const p = await paginate(keys, binding, q, (after, limit) => listTenantDomains(sql, tenantId, after, limit), createdCursorOf)
  return mapPage(p, toTenantDomainDto)
}

export async function removeDomain({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  if (!isUuid(id)) throw notFound()
  return sql.begin(async (tx) => {
    const row = await deleteTenantDomain(tx, tenantId, id)
    if (!row) throw notFound()
    await recordAudit(tx, ctx, {
      action: 'domain.removed',
      tenantId,
      target: domainTarget(row),
      details: { domain: row.domain, wasVerified: row.verified_at !== null },
    })
    return row
  })
}

const uniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505'

/** Looks the TXT record up now. A domain another tenant holds verified stays theirs until they delete it. A failed
 *  attempt changes nothing but is recorded all the same (with the pool, before the error is answered). */
export async function verifyDomain({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  const row = isUuid(id) ? await findTenantDomain(sql, tenantId, id) : undefined
  if (!row) throw notFound()
  if (row.verified_at) return row
  const attempt = { action: 'domain.verified', tenantId, target: domainTarget(row), details: { domain: row.domain } } as const
  const failed = async (reason: string, message: string) => {
    await recordAudit(sql, ctx, { ...attempt, outcome: 'failure', reason })
    return new ApiError('BAD_REQUEST', message)
  }
  const name = recordNameOf(row.domain)
  const expected = toTenantDomainDto(row).verificationRecord.value
  const txt = await lookupTxt(config, name)
  if (!txt.found) {
    throw txt.reason === 'no-record'
      ? await failed('no_record', `No TXT record is published at ${name} yet; publish it and retry (DNS changes can take a while to appear)`)
      : await failed('lookup_failed', `The TXT records at ${name} could not be looked up now; retry later`)
  }
  if (!txt.values.includes(expected)) {
    throw await failed('record_mismatch', `${txt.values.length} TXT record(s) at ${name}, none with the expected value; publish it exactly and retry`)
  }
  const verified = await sql
    .begin(async (tx) => {
      const marked = await markTenantDomainVerified(tx, tenantId, row.id)
      if (marked) await recordAudit(tx, ctx, attempt)
      return marked
    })
    .catch((err) => (uniqueViolation(err) ? undefined : Promise.reject(err)))
  if (!verified) throw await failed('verified_elsewhere', `${row.domain} is verified by another tenant; it must remove its claim first`)
  return verified
}

/** Whether `tenantId` has proven control of `domain`. */
export async function domainVerifiedFor(db: Db, tenantId: string, domain: string): Promise<boolean> {
  return (await findTenantsVerifyingDomain(db, domain)).includes(tenantId)
}
