import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client'
import { recordAudit } from '../audit/service'
import { tenantOf, type ActingContext, type RequestContext } from '../identity/context'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { TENANT_ID, taskQueues } from '../../workflows/contract'
import { tenantDeletionWorkflowId, TenantDeletionWorkflowType, type TenantDeletionInput } from '../../workflows/contract-tenant-deletion'
import { deletionBlocker } from './blockers'
import type { TenantDeletionJob } from './model'
import { findDeletionJob, findOpenDeletionJob, insertDeletionJob, markJobFailed, requeueFailedJob, type DeletionJobRow } from './queries'
import { BUCKET_STEPS, ROWS_PHASE_STEPS } from './steps'
import { lockTenantLifecycle, setTenantLifecycle } from '../tenants/queries'
import { findLiveOffboarding } from '../offboarding/queries'

type Deps = Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>

/** Workflows of the tenant that do not count as its active work: the deletion itself, and the offboarding that waits
 *  for it (its id starts so). */
const OWN_WORKFLOWS = ['tenant-deletion/', 'tenant-offboarding/']

export function toTenantDeletionJob(r: DeletionJobRow): TenantDeletionJob {
  const sum = (prefix: string) => Object.entries(r.counts).reduce((n, [k, v]) => (k.startsWith(prefix) ? n + Number(v) : n), 0)
  const steps: readonly string[] =
    r.phase === 'buckets' ? BUCKET_STEPS : r.phase === 'rows' ? ROWS_PHASE_STEPS : r.phase === 'credentials' ? ['revoke', 'final_event'] : []
  const receipt = r.receipt as TenantDeletionJob['receipt']
  return {
    id: r.id,
    tenantId: r.tenant_id,
    status: r.status,
    trigger: r.trigger,
    workflowId: tenantDeletionWorkflowId(r.tenant_id),
    progress: {
      phase: r.phase,
      step: steps[r.step_index] ?? null,
      stepIndex: r.step_index,
      steps: steps.length,
      rowsDeleted: sum('table:'),
      objectsDeleted: sum('bucket:'),
      counts: Object.fromEntries(Object.entries(r.counts).map(([k, v]) => [k, Number(v)])),
    },
    attempts: r.attempts,
    blockedReason: r.blocked_reason,
    error: r.error,
    receipt: receipt ?? null,
    createdAt: r.created_at.toISOString(),
    startedAt: r.started_at?.toISOString() ?? null,
    finishedAt: r.finished_at?.toISOString() ?? null,
  }
}

/** Deleting a tenant is its owners' decision alone (an admin manages the tenant, but does not end it). */
function requireOwner(ctx: RequestContext) {
  if (tenantOf(ctx).role !== 'owner') throw new ApiError('PERMISSION_DENIED', "Only the tenant's owners can delete it")
}

/** The first workflow of the tenant still running (a build, a delivery, an export), by the TenantId search attribute. */
export async function activeTenantWork(deps: Pick<ServiceDeps, 'temporal'>, tenantId: string): Promise<string | null> {
  const client = await deps.temporal.get()
  for await (const wf of client.workflow.list({ query: `TenantId = '${tenantId}' AND ExecutionStatus = 'Running'` })) {
    if (!OWN_WORKFLOWS.some((p) => wf.workflowId.startsWith(p))) return wf.workflowId
  }
  return null
}

/** What refuses a deletion job now, in the order the interface names them. A tenant being deleted already (a job
 *  that was blocked or failed) may be deleted again. */
async function preconditions(deps: Deps, tenantId: string) {
  const lifecycle = await lockTenantLifecycle(deps.sql, tenantId)
  const request = await findLiveOffboarding(deps.sql, tenantId)
  if ((lifecycle !== 'offboarding' && lifecycle !== 'deleting') || !request) {
    throw new ApiError('TENANT_NOT_OFFBOARDING', 'Only a tenant that is offboarding can be deleted: POST /v1/tenants/current/offboarding first')
  }
  // The window is over when its timer has fired (window_elapsed) or its end has passed and the timer is due.
  if (request.state === 'open' && request.window_ends_at.getTime() > Date.now()) {
    throw new ApiError(
      'RETENTION_WINDOW_NOT_ELAPSED',
      `The retention window ends at ${request.window_ends_at.toISOString()}; the tenant can be deleted after it`,
    )
  }
  const blocker = await deletionBlocker(deps.sql, tenantId)
  if (blocker) throw new ApiError(blocker.code, blocker.message)
  const work = await activeTenantWork(deps, tenantId)
  if (work) throw new ApiError('DELETION_BLOCKED_BY_ACTIVE_WORK', `Work of the tenant is still running (${work}); delete once it has finished`)
}

/** How long a start waits for the tenant's previous deletion run to close. A run marks its job failed in its last
 *  activity and closes a moment later, so a retry sent at once can meet it still running. */
const CLOSING_WAIT_MS = 10_000

async function startWorkflow(deps: Deps, job: DeletionJobRow) {
  const args: [TenantDeletionInput] = [{ tenantId: job.tenant_id, jobId: job.id }]
  const client = await deps.temporal.get()
  const workflowId = tenantDeletionWorkflowId(job.tenant_id)
  const start = () =>
    client.workflow.start(TenantDeletionWorkflowType.run, {
      workflowId,
      taskQueue: taskQueues(deps.config).deletion,
      args,
      typedSearchAttributes: [{ key: TENANT_ID, value: job.tenant_id }],
    })
  try {
    try {
      await start()
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err
      const closed = client.workflow
        .getHandle(workflowId)
        .result()
        .then(
          () => true,
          () => true,
        )
      if (!(await Promise.race([closed, Bun.sleep(CLOSING_WAIT_MS).then(() => false)]))) throw err
      await start()
    }
  } catch (err) {
    // A job no workflow will ever run must not stay open (a retry can start it again).
    const closing = err instanceof WorkflowExecutionAlreadyStartedError
    await markJobFailed(deps.sql, job.id, closing ? 'A deletion workflow of the tenant is still closing' : 'The job could not be started')
    if (closing) throw new ApiError('TENANT_DELETION_JOB_CONFLICT', 'The previous deletion run of the tenant is still closing; retry in a few seconds')
    throw err
  }
}

/** Opens the tenant's deletion job and starts its workflow; `actor` is the owner's request or the offboarding's
 *  workflow when the retention window ends. Null when another job of the tenant is open. */
export async function openDeletionJob(
  deps: Deps,
  actor: ActingContext,
  tenantId: string,
  trigger: DeletionJobRow['trigger'],
  requestedBy: string | null,
): Promise<DeletionJobRow | null> {
  const job = await deps.sql.begin(async (tx) => {
    const row = await insertDeletionJob(tx, { tenantId, trigger, requestedBy })
    if (!row) return null
    // From here the tenant is being deleted (the new-work gate refuses in this state as in offboarding).
    await setTenantLifecycle(tx, tenantId, 'offboarding', 'deleting')
    await recordAudit(tx, actor, {
      action: 'tenant.deletion_requested',
      tenantId,
      target: { type: 'tenant_deletion_job', id: row.id },
      details: { trigger },
    })
    return row
  })
  if (job) await startWorkflow(deps, job)
  return job
}

/** The retention window's end starts the deletion by itself (the offboarding workflow's last activity). Work of the
 *  tenant still running is waited for: this throws, and the activity is retried until it has ended. A legal hold does
 *  not stop the start: the job blocks before its first batch, visibly. Null when a job of the tenant is already open, or
 *  the tenant is gone or back to active. */
export async function startDeletionAfterWindow(deps: Deps, actor: ActingContext, tenantId: string): Promise<DeletionJobRow | null> {
  const lifecycle = await lockTenantLifecycle(deps.sql, tenantId)
  if ((lifecycle !== 'offboarding' && lifecycle !== 'deleting') || (await findOpenDeletionJob(deps.sql, tenantId))) return null
  const work = await activeTenantWork(deps, tenantId)
  if (work) throw new Error(`the tenant's deletion waits for its running work (${work})`)
  return openDeletionJob(deps, actor, tenantId, 'window_elapsed', null)
}

const conflict = () => new ApiError('TENANT_DELETION_JOB_CONFLICT', 'A deletion job of this tenant is already queued or running')

export async function requestTenantDeletion(deps: Deps, ctx: RequestContext): Promise<TenantDeletionJob> {
  requireOwner(ctx)
  const { tenantId } = tenantOf(ctx)
  await preconditions(deps, tenantId)
  if (await findOpenDeletionJob(deps.sql, tenantId)) throw conflict()
  const job = await openDeletionJob(deps, ctx, tenantId, 'request', ctx.principal.userId)
  if (!job) throw conflict()
  return toTenantDeletionJob(job)
}

const notFound = (id: string) => new ApiError('TENANT_DELETION_JOB_NOT_FOUND', `No deletion job ${id} in this tenant`)

export async function getTenantDeletionJob(deps: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, jobId: string): Promise<TenantDeletionJob> {
  requireOwner(ctx)
  const row = isUuid(jobId) ? await findDeletionJob(deps.sql, tenantOf(ctx).tenantId, jobId) : undefined
  if (!row) throw notFound(jobId)
  return toTenantDeletionJob(row)
}

/** A failed job starts again where its last committed batch left it (its cursor and counts are kept). */
export async function retryTenantDeletionJob(deps: Deps, ctx: RequestContext, jobId: string): Promise<TenantDeletionJob> {
  requireOwner(ctx)
  const { tenantId } = tenantOf(ctx)
  const row = isUuid(jobId) ? await findDeletionJob(deps.sql, tenantId, jobId) : undefined
  if (!row) throw notFound(jobId)
  if (row.status !== 'failed') throw new ApiError('TENANT_DELETION_JOB_NOT_RETRYABLE', `The job is ${row.status}; only a failed job can be retried`)
  await preconditions(deps, tenantId)
  const job = await deps.sql.begin(async (tx) => {
    const requeued = await requeueFailedJob(tx, tenantId, jobId)
    if (!requeued) return null
    await recordAudit(tx, ctx, { action: 'tenant.deletion_retried', tenantId, target: { type: 'tenant_deletion_job', id: jobId } })
    return requeued
  })
  if (!job) {
    if (await findOpenDeletionJob(deps.sql, tenantId)) throw conflict()
    throw new ApiError('TENANT_DELETION_JOB_NOT_RETRYABLE', 'The job is no longer failed')
  }
  await startWorkflow(deps, job)
  return toTenantDeletionJob(job)
}
