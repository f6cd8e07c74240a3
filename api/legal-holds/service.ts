import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import { HOLD_SCOPE_KINDS, type CreateLegalHoldInput, type LegalHold } from './model'
import { findLegalHold, insertLegalHold, listLegalHolds, releaseLegalHold, type HoldScopeKind, type LegalHoldRow } from './queries'

export const toLegalHold = (r: LegalHoldRow): LegalHold => ({
  id: r.id,
  tenantId: r.tenant_id,
  matter: r.matter,
  reason: r.reason,
  scope: { kind: r.scope_kind, userId: r.user_id, projectId: r.project_id },
  status: r.released_at ? 'released' : 'active',
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
  releasedAt: r.released_at?.toISOString() ?? null,
  releasedBy: r.released_by,
})

const notFound = () => new ApiError('LEGAL_HOLD_NOT_FOUND', 'No legal hold with this id in the current tenant')
const scopeInvalid = (why: string) =>
  new ApiError('LEGAL_HOLD_SCOPE_INVALID', `A hold has exactly one scope: kind tenant, member (with userId) or project (with projectId); ${why}`)

/** Exactly one scope: a kind we know, with the one id that kind takes and no other. */
function scopeOf(input: CreateLegalHoldInput['scope']): { kind: HoldScopeKind; userId: string | null; projectId: string | null } {
  if (!input) throw scopeInvalid('none was given')
  const kind = input.kind as HoldScopeKind
  if (!HOLD_SCOPE_KINDS.includes(kind)) throw scopeInvalid(`"${input.kind}" is not a scope kind`)
  const userId = input.userId ?? null
  const projectId = input.projectId ?? null
  const wanted = { tenant: [false, false], member: [true, false], project: [false, true] }[kind]
  if ((userId !== null) !== wanted[0] || (projectId !== null) !== wanted[1]) {
    throw scopeInvalid(
      kind === 'tenant'
        ? 'a tenant scope names no user or project'
        : `a ${kind} scope names its ${kind === 'member' ? 'userId' : 'projectId'} and nothing else`,
    )
  }
  return { kind, userId, projectId }
}

/** The audit entry names the hold and its kind, never whom or what it holds, nor the matter: the tenant's audit log is
 *  read by every holder of tenant:manage (the held member may be one), and its entries reach the tenant's webhooks.
 *  The hold itself, readable only with legal_hold:manage, says the rest. No subject user is set, so the held member's
 *  security activity never shows it. */
const auditDetails = (r: LegalHoldRow) => ({ scopeKind: r.scope_kind })

export async function placeLegalHold({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, input: CreateLegalHoldInput) {
  const { tenantId } = tenantOf(ctx)
  const scope = scopeOf(input.scope)
  return sql.begin(async (tx) => {
    const row = await insertLegalHold(tx, { tenantId, matter: input.matter, reason: input.reason, ...scope, createdBy: ctx.principal.userId })
    if (!row) {
      // Another tenant's project and a project that never was answer alike, so ids cannot be probed across tenants.
      throw scope.kind === 'member'
        ? new ApiError('SUBJECT_NOT_IN_TENANT', 'This user is not a member of the current tenant')
        : new ApiError('LEGAL_HOLD_SCOPE_NOT_FOUND', 'No project with this id in the current tenant')
    }
    await recordAudit(tx, ctx, { action: 'legal_hold.placed', tenantId, target: { type: 'legal_hold', id: row.id }, details: auditDetails(row) })
    return toLegalHold(row)
  })
}

export async function getLegalHold({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, holdId: string) {
  const row = isUuid(holdId) ? await findLegalHold(sql, tenantOf(ctx).tenantId, holdId) : undefined
  if (!row) throw notFound()
  return toLegalHold(row)
}

export async function listTenantLegalHolds(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { status?: 'active' | 'released' },
) {
  const { tenantId } = tenantOf(ctx)
  const active = q.status === undefined ? null : q.status === 'active'
  const binding = { route: 'GET /tenants/current/legal-holds', scope: `tenant:${tenantId}`, filters: { status: q.status } }
  const p = await paginate(keys, binding, q, (after, limit) => listLegalHolds(sql, tenantId, active, after, limit), createdCursorOf)
  return mapPage(p, toLegalHold)
}

/** Release is final: a released hold stays listed as the record of what was kept and when; releasing it again is a
 *  conflict, not a silent success, so two people acting on one matter learn that the other did. */
export async function releaseTenantLegalHold({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, holdId: string) {
  const { tenantId } = tenantOf(ctx)
  if (!isUuid(holdId)) throw notFound()
  return sql.begin(async (tx) => {
    const row = await releaseLegalHold(tx, tenantId, holdId, ctx.principal.userId)
    if (!row) {
      if (await findLegalHold(tx, tenantId, holdId)) throw new ApiError('LEGAL_HOLD_ALREADY_RELEASED', 'This legal hold was released already')
      throw notFound()
    }
    await recordAudit(tx, ctx, { action: 'legal_hold.released', tenantId, target: { type: 'legal_hold', id: row.id }, details: auditDetails(row) })
    return toLegalHold(row)
  })
}
