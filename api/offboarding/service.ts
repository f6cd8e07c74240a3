// Offboarding a tenant (docs/api.md "Offboarding a tenant"): the request that stops the tenant's new work, starts its
// export and its retention window, and can be cancelled before the window ends. The workflow is
// workflows/offboarding.ts; what it writes is described by api/offboarding/export.ts.
import { randomUUID } from 'node:crypto'
import { recordAudit } from '../audit/service'
import { modelVersionsRunWithin } from '../edge-packages/queries'
import { tenantOf, type RequestContext } from '../identity/context'
import type { Membership, Principal } from '../identity/service'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { regionsFromConfig } from '../storage/regions'
import { s3For } from '../storage/s3'
import { readyBuckets, regionOf } from '../storage/service'
import { lockTenantLifecycle, setTenantLifecycle } from '../tenants/queries'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { OFFBOARDING_CANCEL_SIGNAL, offboardingWorkflowId, OffboardingWorkflowType, type TenantOffboardingInput } from '../../workflows/contract-offboarding'
import { exportObjectKeys } from './export'
import type { OffboardingBlocker, OffboardingRequest } from './model'
import { cancelOffboarding, findLiveOffboarding, insertOffboarding, type OffboardingRow } from './queries'

/** How recently a session must have proven presence (signed in, or answered a second factor) to offboard. */
export const OFFBOARDING_REAUTHENTICATION_SECONDS = 5 * 60
/** Lineage: a robot that reported a run of one of the tenant's model versions within this many days still depends on
 *  it, and offboarding is refused until none has. */
export const OFFBOARDING_LINEAGE_DAYS = 7
/** How long the view's download links stay valid: fetch the view again for fresh ones. */
export const OFFBOARDING_EXPORT_URL_SECONDS = 15 * 60

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'temporal' | 'log'>

const notFound = () => new ApiError('OFFBOARDING_REQUEST_NOT_FOUND', 'This tenant has no open offboarding request')

/** Only an owner may offboard, read or cancel: the export holds the whole tenant. */
function requireOwner(ctx: RequestContext): Membership {
  const m = tenantOf(ctx)
  if (m.role !== 'owner') throw new ApiError('PERMISSION_DENIED', "Only the tenant's owners may offboard it, read its offboarding or cancel it")
  return m
}

/** Sudo mode: the request must come from a session that proved its user's presence in the last five minutes (a PAT
 *  or an old session may be stolen, and offboarding ends in deletion). */
function requireRecentAuthentication(p: Principal): void {
  const auth = p.authentication
  if (p.credential !== 'session' || !auth) {
    throw new ApiError('FORBIDDEN', 'Offboarding is requested from a signed-in session, not with a personal access token')
  }
  if (Date.now() - auth.authenticatedAt.getTime() > OFFBOARDING_REAUTHENTICATION_SECONDS * 1000) {
    throw new ApiError(
      'FORBIDDEN',
      `Sign in again (or answer your second factor) within ${OFFBOARDING_REAUTHENTICATION_SECONDS / 60} minutes before offboarding`,
    )
  }
}

async function lineageBlockers(deps: Pick<ServiceDeps, 'sql'>, tenantId: string): Promise<OffboardingBlocker[]> {
  const running = await modelVersionsRunWithin(deps.sql, tenantId, OFFBOARDING_LINEAGE_DAYS)
  if (running.length === 0) return []
  return [
    {
      code: 'OFFBOARDING_BLOCKED_BY_LINEAGE',
      message: `Robots reported runs of ${running.length} of this tenant's model versions in the last ${OFFBOARDING_LINEAGE_DAYS} days (the latest at ${running[0]!.last_run_at.toISOString()})`,
      modelVersionIds: running.map((r) => r.model_version_id),
    },
  ]
}

async function toView(deps: Deps, r: OffboardingRow): Promise<OffboardingRequest> {
  let download: OffboardingRequest['export']['download'] = null
  // A region taken out of the configuration since leaves the request readable, without links.
  const region = r.export_region_id ? regionsFromConfig(deps.config).find((g) => g.id === r.export_region_id && g.accessKey && g.secretKey) : undefined
  if (r.export_status === 'ready' && region && r.export_bucket && r.export_prefix) {
    const now = new Date()
    const keys = exportObjectKeys(r.export_prefix)
    const sign = (key: string) => s3For(region).presignedGetObject(r.export_bucket!, key, OFFBOARDING_EXPORT_URL_SECONDS, {}, now)
    download = {
      rows: await sign(keys.rows),
      objects: await sign(keys.objects),
      manifest: await sign(keys.manifest),
      expiresAt: new Date(now.getTime() + OFFBOARDING_EXPORT_URL_SECONDS * 1000).toISOString(),
    }
  }
  return {
    id: r.id,
    tenantId: r.tenant_id,
    state: r.state === 'window_elapsed' ? 'window_elapsed' : 'open',
    requestedBy: r.requested_by,
    retentionDays: r.retention_days,
    windowEndsAt: r.window_ends_at.toISOString(),
    workflowId: r.workflow_id,
    export: {
      status: r.export_status,
      rows: r.export_rows === null ? null : Number(r.export_rows),
      objects: r.export_objects === null ? null : Number(r.export_objects),
      manifestSha256: r.export_sha256,
      readyAt: r.export_ready_at?.toISOString() ?? null,
      error: r.export_error,
      download,
    },
    blockers: r.state === 'open' ? await lineageBlockers(deps, r.tenant_id) : [],
    createdAt: r.created_at.toISOString(),
  }
}

/** Opens the tenant's offboarding: the request row, the tenant `offboarding` (the new-work gate refuses from the
 *  commit on) and its audit entry in one transaction, then its workflow. The tenant's row is locked first, so of any
 *  number of concurrent requests one opens and the others answer OFFBOARDING_REQUEST_ALREADY_ACTIVE. */
export async function requestOffboarding(deps: Deps, ctx: RequestContext): Promise<OffboardingRequest> {
  const { tenantId } = requireOwner(ctx)
  requireRecentAuthentication(ctx.principal)
  // The export has to go somewhere: the tenant's export bucket.
  const exportBucket = (await readyBuckets(deps.sql, tenantId)).find((b) => b.kind === 'export')!
  regionOf(deps.config, exportBucket.region_id)
  const [lineage] = await lineageBlockers(deps, tenantId)
  if (lineage)
    throw new ApiError('OFFBOARDING_BLOCKED_BY_LINEAGE', `${lineage.message}: stop them first (or wait until none ran for ${OFFBOARDING_LINEAGE_DAYS} days)`)
  const id = randomUUID()
  const workflowId = offboardingWorkflowId(tenantId, id)
  const retentionDays = deps.config.OFFBOARDING_RETENTION_DAYS
  const alreadyActive = () =>
    new ApiError('OFFBOARDING_REQUEST_ALREADY_ACTIVE', 'This tenant already has an offboarding request: GET /v1/tenants/current/offboarding')
  const row = await deps.sql.begin(async (tx) => {
    const lifecycle = await lockTenantLifecycle(tx, tenantId)
    if (lifecycle !== 'active') throw alreadyActive()
    const inserted = await insertOffboarding(tx, { id, tenantId, requestedBy: ctx.principal.userId, retentionDays, workflowId })
    if (!inserted) throw alreadyActive()
    await setTenantLifecycle(tx, tenantId, 'active', 'offboarding')
    await recordAudit(tx, ctx, {
      action: 'tenant.offboarding_requested',
      tenantId,
      target: { type: 'offboarding_request', id },
      details: { retentionDays, windowEndsAt: inserted.window_ends_at.toISOString() },
    })
    return inserted
  })
  const args: [TenantOffboardingInput] = [{ tenantId, requestId: id, windowEndsAt: row.window_ends_at.toISOString() }]
  try {
    await (await deps.temporal.get()).workflow.start(OffboardingWorkflowType.offboard, {
      workflowId,
      taskQueue: taskQueues(deps.config).offboarding,
      args,
      typedSearchAttributes: [{ key: TENANT_ID, value: tenantId }],
    })
  } catch (err) {
    // No workflow will ever export or end this request: take it back, so the tenant works again and may retry.
    await deps.sql.begin(async (tx) => {
      await cancelOffboarding(tx, tenantId, ctx.principal.userId)
      await setTenantLifecycle(tx, tenantId, 'offboarding', 'active')
    })
    throw err
  }
  return toView(deps, row)
}

export async function getOffboarding(deps: Deps, ctx: RequestContext): Promise<OffboardingRequest> {
  const { tenantId } = requireOwner(ctx)
  const row = await findLiveOffboarding(deps.sql, tenantId)
  if (!row) throw notFound()
  return toView(deps, row)
}

/** Before the window ends: the request is cancelled, the tenant active again (nothing was deleted), and the workflow
 *  told to end. After it ends there is no open request to cancel. */
export async function cancelTenantOffboarding(deps: Deps, ctx: RequestContext) {
  const { tenantId } = requireOwner(ctx)
  const row = await deps.sql.begin(async (tx) => {
    const lifecycle = await lockTenantLifecycle(tx, tenantId)
    const cancelled = lifecycle === 'offboarding' ? await cancelOffboarding(tx, tenantId, ctx.principal.userId) : undefined
    if (!cancelled) throw new ApiError('OFFBOARDING_REQUEST_NOT_FOUND', 'This tenant has no offboarding request whose window is still open')
    await setTenantLifecycle(tx, tenantId, 'offboarding', 'active')
    await recordAudit(tx, ctx, { action: 'tenant.offboarding_cancelled', tenantId, target: { type: 'offboarding_request', id: cancelled.id } })
    return cancelled
  })
  try {
    await (await deps.temporal.get()).workflow.getHandle(row.workflow_id).signal(OFFBOARDING_CANCEL_SIGNAL)
  } catch (err) {
    // The request is cancelled either way: a workflow that missed the signal finds it so at the window's end, and ends.
    deps.log.warn('offboarding workflow not signalled', { workflowId: row.workflow_id, err: String(err) })
  }
  return { id: row.id, state: 'cancelled' as const, cancelledAt: row.cancelled_at!.toISOString(), tenantLifecycle: 'active' as const }
}
