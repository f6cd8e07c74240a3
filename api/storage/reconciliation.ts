// Reconciliation jobs as the API sees them: create (or find the active one), list, describe.
import { WorkflowNotFoundError } from '@temporalio/client'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { storageWorkflowIds, StorageWorkflowType, type ReconcileStorageInput } from '../../workflows/contract-storage'
import type { JobSummary } from './model'
import { failJobAndAnnounce } from './outcomes'
import { findActiveJob, findJob, insertJob, listFindings, listJobs, type JobRow, type JobStatus } from './queries'
import { isUnreachable, s3For } from './s3'
import { readyBuckets, regionOf, type StorageDeps } from './service'

/** Findings shown with a job; the full list stays in Postgres for operators. */
export const FINDINGS_SHOWN = 100
const PROBE_TIMEOUT_MS = 3000

const iso = (d: Date | null) => d?.toISOString() ?? null

export const toJobSummary = (r: JobRow): JobSummary => ({
  id: r.id,
  status: r.status,
  dryRun: r.dry_run,
  objectsScanned: r.objects_scanned,
  orphanCount: r.orphan_count,
  missingCount: r.missing_count,
  createdAt: r.created_at.toISOString(),
  startedAt: iso(r.started_at),
  finishedAt: iso(r.finished_at),
})

/** Answers within PROBE_TIMEOUT_MS whether the region's endpoint serves the bucket at all. */
async function probe(deps: StorageDeps, regionId: string, bucket: string) {
  const s3 = s3For(regionOf(deps.config, regionId))
  const unavailable = () => new ApiError('STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE', `Storage region "${regionId}" cannot be reached; try again later`)
  let timer: Timer | undefined
  try {
    await Promise.race([
      s3.bucketExists(bucket),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(unavailable()), PROBE_TIMEOUT_MS)
      }),
    ])
  } catch (err) {
    if (err instanceof ApiError) throw err
    if (isUnreachable(err)) throw unavailable()
    throw err
  } finally {
    clearTimeout(timer)
  }
}

/** The tenant's queued or running job when it asks for the same thing; a conflict when it differs. */
function existing(active: JobRow, dryRun: boolean) {
  if (active.dry_run !== dryRun) {
    throw new ApiError(
      'RECONCILIATION_ALREADY_RUNNING',
      `Reconciliation job ${active.id} (dryRun ${active.dry_run}) is ${active.status}; wait for it to finish`,
    )
  }
  return { job: toJobSummary(active), created: false }
}

/** An open job whose workflow has closed anyway (terminated by an operator, say) would block the tenant for
 *  good, so it is failed here. A job without a workflow yet is one being started: left alone. */
async function stillOpen(deps: StorageDeps, job: JobRow): Promise<boolean> {
  const handle = (await deps.temporal.get()).workflow.getHandle(storageWorkflowIds.reconcile(job.tenant_id, job.id))
  const status = await handle.describe().then(
    (d) => d.status.name,
    (err) => {
      if (err instanceof WorkflowNotFoundError) return 'STARTING'
      throw err
    },
  )
  if (status === 'RUNNING' || status === 'STARTING') return true
  await failJobAndAnnounce(deps.sql, job.tenant_id, job.id, 'RECONCILIATION_FAILED', `The job's workflow ended (${status.toLowerCase()}) without finishing it`)
  return false
}

export async function createReconciliationJob(deps: StorageDeps, ctx: RequestContext, dryRun: boolean) {
  const { tenantId } = tenantOf(ctx)
  const buckets = await readyBuckets(deps.sql, tenantId)
  const active = await findActiveJob(deps.sql, tenantId)
  if (active && (await stillOpen(deps, active))) return existing(active, dryRun)
  await probe(deps, buckets[0]!.region_id, buckets[0]!.name)
  const job = await deps.sql.begin(async (tx) => {
    const made = await insertJob(tx, { tenantId, dryRun, createdBy: ctx.principal.userId })
    if (made) {
      await recordAudit(tx, ctx, {
        action: 'storage.reconciliation_started',
        tenantId,
        target: { type: 'reconciliation_job', id: made.id },
        details: { dryRun },
      })
    }
    return made
  })
  if (!job) {
    // Another request created one between our read and insert.
    const winner = await findActiveJob(deps.sql, tenantId)
    if (winner) return existing(winner, dryRun)
    throw new ApiError('RECONCILIATION_ALREADY_RUNNING', 'Another reconciliation job was just started; list the jobs to find it')
  }
  const input: ReconcileStorageInput = { tenantId, jobId: job.id }
  try {
    await (await deps.temporal.get()).workflow.start(StorageWorkflowType.reconcile, {
      workflowId: storageWorkflowIds.reconcile(tenantId, job.id),
      taskQueue: taskQueues(deps.config).storage,
      args: [input],
      typedSearchAttributes: [{ key: TENANT_ID, value: tenantId }],
      memo: { jobId: job.id, dryRun },
    })
  } catch (err) {
    // A job no workflow will ever run must not stay queued: it would block every later request.
    await failJobAndAnnounce(deps.sql, tenantId, job.id, 'SERVICE_UNAVAILABLE', 'The job could not be started')
    throw err
  }
  return { job: toJobSummary(job), created: true }
}

export async function listReconciliationJobs({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, q: PageParams & { status?: JobStatus }) {
  const { tenantId } = tenantOf(ctx)
  const binding = { route: 'GET /tenants/current/storage-reconciliation-jobs', scope: `tenant:${tenantId}`, filters: { status: q.status } }
  const p = await paginate(keys, binding, q, (after, limit) => listJobs(sql, tenantId, q.status, after, limit), createdCursorOf)
  return mapPage(p, toJobSummary)
}

export async function describeReconciliationJob({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, jobId: string) {
  const { tenantId } = tenantOf(ctx)
  const notFound = () => new ApiError('STORAGE_RECONCILIATION_JOB_NOT_FOUND', `No reconciliation job ${jobId} in this tenant`)
  if (!isUuid(jobId)) throw notFound()
  const job = await findJob(sql, tenantId, jobId)
  if (!job) throw notFound()
  const findings = await listFindings(sql, tenantId, jobId, FINDINGS_SHOWN + 1)
  return {
    ...toJobSummary(job),
    bytesScanned: job.bytes_scanned,
    errorCode: job.error_code,
    errorMessage: job.error_message,
    updatedAt: job.updated_at.toISOString(),
    workflowId: storageWorkflowIds.reconcile(tenantId, job.id),
    findings: findings.slice(0, FINDINGS_SHOWN),
    findingsTruncated: findings.length > FINDINGS_SHOWN,
  }
}
