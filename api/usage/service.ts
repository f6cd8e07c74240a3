import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { tenantOf, type RequestContext } from '../identity/context'
import { findProject } from '../projects/queries'
import { METERS, METER_NAMES, isMeter, type Meter } from './meters'
import { USAGE_SUMMARY_MAX_DAYS, type UsageSummary } from './model'
import { groupUsage, type UsageGroupRow } from './queries'

const DAY_MS = 86_400_000
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i
const EARLIEST = Date.parse('0001-01-01T00:00:00Z')
const SCOPES = ['tenant', 'project', 'meter'] as const
const GROUPS = ['project', 'day'] as const

/** A group's quantity by its meter's aggregation. */
function quantityOf(meter: string, r: UsageGroupRow): string {
  const aggregation = isMeter(meter) ? METERS[meter].aggregation : 'sum'
  if (aggregation === 'max') return r.peak
  if (aggregation === 'unique_count') return r.distinct_subjects
  return r.total
}

/** One tenant's meter over [from, to) by the meter's aggregation, exactly (bigint): what an invoice line bills. */
export async function sumUsage(db: Db, tenantId: string, meter: Meter, from: Date, to: Date, projectId: string | null = null): Promise<bigint> {
  const [row] = await groupUsage(db, { tenantId, from, to, projectId, meter }, { project: false, day: false })
  return row ? BigInt(quantityOf(meter, row)) : 0n
}

const invalid = (path: string, message: string) => new ApiError('VALIDATION_ERROR', message, { errors: [{ path, message }] })

/** Both ends required, RFC 3339, in order, and no longer than the maximum (the audit log's rule, with this route's
 *  own maximum). */
function window(q: { from?: string; to?: string }) {
  if (q.from === undefined || q.to === undefined)
    throw invalid(q.from === undefined ? 'query.from' : 'query.to', 'Name the window: from and to (RFC 3339 times)')
  const from = RFC3339.test(q.from) ? new Date(q.from) : null
  const to = RFC3339.test(q.to) ? new Date(q.to) : null
  if (!from || Number.isNaN(from.getTime()) || from.getTime() < EARLIEST) throw invalid('query.from', 'from must be an RFC 3339 time')
  if (!to || Number.isNaN(to.getTime()) || to.getTime() <= from.getTime()) throw invalid('query.to', 'to must be an RFC 3339 time after from')
  if (to.getTime() - from.getTime() > USAGE_SUMMARY_MAX_DAYS * DAY_MS)
    throw invalid('query.to', `The window may span at most ${USAGE_SUMMARY_MAX_DAYS} days; ask for shorter ones`)
  return { from, to }
}

function groupsOf(groupBy: string | string[] | undefined): ('project' | 'day')[] {
  if (groupBy === undefined || groupBy === '') return []
  const parts = [...new Set((Array.isArray(groupBy) ? groupBy : [groupBy]).flatMap((g) => g.split(',')))]
  for (const p of parts)
    if (!(GROUPS as readonly string[]).includes(p)) throw invalid('query.groupBy', `groupBy takes ${GROUPS.join(', ')}; "${p}" is none of them`)
  return GROUPS.filter((g) => parts.includes(g))
}

const scopeInvalid = (message: string) => new ApiError('USAGE_SUMMARY_SCOPE_INVALID', message)

/** The current tenant's usage in a window, per meter and optionally per project and UTC day. Another tenant's
 *  project is NOT_FOUND, as a project that does not exist. */
export async function usageSummary(
  { sql }: Pick<ServiceDeps, 'sql'>,
  ctx: RequestContext,
  q: { scope: string; from?: string; to?: string; projectId?: string; meter?: string; groupBy?: string | string[] },
): Promise<UsageSummary> {
  const { tenantId } = tenantOf(ctx)
  const scope = q.scope as (typeof SCOPES)[number]
  if (!SCOPES.includes(scope)) throw scopeInvalid(`scope is one of ${SCOPES.join(', ')}`)
  if (scope !== 'project' && q.projectId !== undefined) throw scopeInvalid('projectId narrows scope=project only')
  if (scope !== 'meter' && q.meter !== undefined) throw scopeInvalid('meter narrows scope=meter only')
  if (scope === 'project' && q.projectId === undefined) throw scopeInvalid('scope=project names its project: projectId')
  if (scope === 'meter' && (q.meter === undefined || !isMeter(q.meter))) throw scopeInvalid(`scope=meter names a meter: one of ${METER_NAMES.join(', ')}`)
  const groupBy = groupsOf(q.groupBy)
  const { from, to } = window(q)
  let projectId: string | null = null
  if (scope === 'project') {
    const project = isUuid(q.projectId!) ? await findProject(sql, tenantId, q.projectId!) : undefined
    if (!project) throw new ApiError('NOT_FOUND', 'No project with this id in the current tenant')
    projectId = project.id
  }
  const meter = scope === 'meter' ? (q.meter as Meter) : null
  const filter = { tenantId, from, to, projectId, meter }
  const [rows, totals] = await Promise.all([
    groupBy.length > 0 ? groupUsage(sql, filter, { project: groupBy.includes('project'), day: groupBy.includes('day') }) : null,
    groupUsage(sql, filter, { project: false, day: false }),
  ])
  const covered = meter ? [meter] : METER_NAMES
  const totalOf = new Map(totals.map((r) => [r.meter, quantityOf(r.meter, r)]))
  return {
    scope,
    from: from.toISOString(),
    to: to.toISOString(),
    projectId,
    meter,
    groupBy,
    meters: covered.map((m) => ({ meter: m, ...METERS[m] })),
    totals: covered.map((m) => ({ meter: m, quantity: totalOf.get(m) ?? '0' })),
    rows: (rows ?? totals).map((r) => ({ meter: r.meter, projectId: r.project_id, day: r.day, quantity: quantityOf(r.meter, r) })),
  }
}
