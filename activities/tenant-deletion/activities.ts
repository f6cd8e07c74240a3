// The tenant deletion's activities. Every unit of work runs under the job's claim, in a transaction that locks the job
// row, asks the blockers again (a legal hold placed mid-job stops it here, the job `blocked`), does one batch and moves
// the job's cursor and counts in the same commit: a worker killed at any point resumes from the last commit, deletes
// nothing twice and counts nothing twice. Objects are the one step outside a transaction: the keys of a multi-object
// delete are written down first (pending_keys) and counted after, so a delete interrupted between the two is sent again
// (a no-op for S3) and counted once.
import { ApplicationFailure, Context } from '@temporalio/activity'
import { eraseTenantPersonalBatch } from '../../api/audit/queries'
import { recordAudit } from '../../api/audit/service'
import { publishEvent } from '../../api/events/service'
import { revokeTenantApiKeys, tenantApiKeyDigests } from '../../api/api-keys/queries'
import { retireCredentials } from '../../api/credentials/queries'
import { revokeTenantSessions } from '../../api/sessions/queries'
import { disableTenantSsoConnections } from '../../api/sso/queries'
import { listBuckets } from '../../api/storage/queries'
import { deleteTenantRow, insertTenantTombstone } from '../../api/tenants/queries'
import { disableTenantEndpoints, endpointsForEvent } from '../../api/webhook-endpoints/queries'
import { eventDeliveriesSettled } from '../../api/webhook-deliveries/queries'
import { deletionBlocker } from '../../api/tenant-deletion/blockers'
import { lastBackupExpiry, signReceipt, type DeletionReceipt } from './receipt'
import {
  addCount,
  claimDeletionJob,
  deleteTenantRowsBatch,
  findDeletionJob,
  lockClaimedJob,
  markJobBlocked,
  markJobFailed,
  markJobSucceeded,
  moveCursor,
  noteBucket,
  remainingTenantRows,
  setAuditCursor,
  setFinalEvent,
  setPendingKeys,
  type DeletionJobRow,
} from '../../api/tenant-deletion/queries'
import { auditBlankedKey, BUCKET_STEPS, objectsKey, RETAINED_TABLES, rowsKey, TABLE_STEPS } from '../../api/tenant-deletion/steps'
import type { Db } from '../../api/platform/db'
import { TenantDeletionErrorType, type DeletionProgress, type TenantDeletionInput } from '../../workflows/contract-tenant-deletion'
import type { ActivityDeps } from '../deps'
import { s3ForRegion } from '../storage-provision'
import { workflowActor } from '../system-actor'
import { bucketExists, firstEntries, removeBucket, removeEntries } from './buckets'

/** Verification finding something left sends the job back to the buckets this many times, then fails it. */
const VERIFY_ROUNDS = 3

const permanent = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true })
const progressOf = (j: Pick<DeletionJobRow, 'phase' | 'step_index' | 'status' | 'blocked_reason'>): DeletionProgress => ({
  phase: j.phase,
  stepIndex: j.step_index,
  blocked: j.status === 'blocked' ? (j.blocked_reason ?? 'blocked') : null,
})

type Unit = { progress: DeletionProgress } | { pending: { bucket: string; regionId: string; keys: DeletionJobRow['pending_keys'] & {} } }

/** The batches of the buckets and rows phases, outside Temporal's activity context so the benchmark (bench/tenant-
 *  deletion.ts) runs exactly what the activity runs. `beat` sees the progress after each batch. */
export function deletionBatches(deps: ActivityDeps) {
  const { sql, log, config } = deps

  /** One transaction under the claim: the job locked, the blockers asked, then `work`. A blocker ends the job here. */
  async function underClaim<T>(input: TenantDeletionInput, claim: string, work: (tx: Db, job: DeletionJobRow) => Promise<T>): Promise<T | DeletionProgress> {
    return sql.begin(async (tx): Promise<T | DeletionProgress> => {
      // Sent together, run in order: the holds are read after the job's lock is granted, one round trip fewer a batch
      // (bench/README.md, Tenant deletion).
      const [job, blocker] = await Promise.all([lockClaimedJob(tx, input.jobId, claim), deletionBlocker(tx, input.tenantId)])
      if (!job) throw permanent(TenantDeletionErrorType.jobLost, `Deletion job ${input.jobId} is not held by this run`)
      if (blocker) {
        await markJobBlocked(tx, job.id, blocker.message)
        await recordAudit(tx, workflowActor(), {
          action: 'tenant.deletion_blocked',
          tenantId: input.tenantId,
          target: { type: 'tenant_deletion_job', id: job.id },
          details: { code: blocker.code, reason: blocker.message, phase: job.phase, stepIndex: job.step_index },
        })
        log.warn('tenant deletion blocked', { tenantId: input.tenantId, jobId: job.id, reason: blocker.message })
        return { phase: job.phase, stepIndex: job.step_index, blocked: blocker.message } satisfies DeletionProgress
      }
      return work(tx, job)
    }) as Promise<T | DeletionProgress>
  }
  const isProgress = (x: unknown): x is DeletionProgress => typeof x === 'object' && x !== null && 'blocked' in x && 'phase' in x

  /** One batch of the job's current step: rows of one table, or one multi-object delete. */
  async function unit(input: TenantDeletionInput, claim: string): Promise<Unit> {
    const r = await underClaim(input, claim, async (tx, job): Promise<Unit> => {
      if (job.phase === 'buckets') {
        const kind = BUCKET_STEPS[job.step_index]
        if (kind === undefined) {
          await moveCursor(tx, job.id, 'rows', 0)
          return { progress: { phase: 'rows', stepIndex: 0, blocked: null } }
        }
        const row = (await listBuckets(tx, input.tenantId)).find((b) => b.kind === kind)
        const noted = job.buckets[kind] ?? (row ? { name: row.name, regionId: row.region_id } : undefined)
        if (!noted) {
          await addCount(tx, job.id, objectsKey(kind), 0)
          await moveCursor(tx, job.id, 'buckets', job.step_index + 1)
          return { progress: { phase: 'buckets', stepIndex: job.step_index + 1, blocked: null } }
        }
        if (!job.buckets[kind]) await noteBucket(tx, job.id, kind, noted)
        if (job.pending_keys) return { pending: { bucket: noted.name, regionId: noted.regionId, keys: job.pending_keys } }
        const s3 = s3ForRegion(deps, noted.regionId)
        const keys = await firstEntries(s3, noted.name, config.TENANT_DELETION_BATCH_OBJECTS)
        if (keys.length === 0) {
          await removeBucket(s3, noted.name)
          await addCount(tx, job.id, objectsKey(kind), 0)
          await moveCursor(tx, job.id, 'buckets', job.step_index + 1)
          return { progress: { phase: 'buckets', stepIndex: job.step_index + 1, blocked: null } }
        }
        await setPendingKeys(tx, job.id, keys)
        return { pending: { bucket: noted.name, regionId: noted.regionId, keys } }
      }
      const table = TABLE_STEPS[job.step_index]
      if (table === undefined) {
        // The last step: the retained audit entries lose their personal part, one batch of the chain per commit, the
        // cursor moving with it. The step ends on a batch that walked none.
        const b = await eraseTenantPersonalBatch(tx, input.tenantId, job.audit_erased_through, config.TENANT_DELETION_BATCH_ROWS)
        await addCount(tx, job.id, auditBlankedKey, b.blanked)
        await setAuditCursor(tx, job.id, b.through)
        if (b.walked > 0) return { progress: { phase: 'rows', stepIndex: job.step_index, blocked: null } }
        await moveCursor(tx, job.id, 'receipt', 0)
        return { progress: { phase: 'receipt', stepIndex: 0, blocked: null } }
      }
      // The tokens' digests are retired in the credentials phase; again here for any key made since (idempotent).
      if (table === 'api_keys') await retireCredentials(tx, 'tenant_deleted', await tenantApiKeyDigests(tx, input.tenantId))
      const n = await deleteTenantRowsBatch(tx, table, input.tenantId, config.TENANT_DELETION_BATCH_ROWS, { jobId: job.id, key: rowsKey(table) })
      // A short batch may still leave rows of a concurrent insert: the step ends on a batch that found none.
      if (n === 0) await moveCursor(tx, job.id, 'rows', job.step_index + 1)
      return { progress: { phase: 'rows', stepIndex: n === 0 ? job.step_index + 1 : job.step_index, blocked: null } }
    })
    return isProgress(r) ? { progress: r } : r
  }

  /** Sends the written-down keys and counts them, in that order (see the file's comment). */
  async function removePending(input: TenantDeletionInput, claim: string, p: Extract<Unit, { pending: unknown }>['pending']) {
    await removeEntries(s3ForRegion(deps, p.regionId), p.bucket, p.keys)
    await sql.begin(async (tx) => {
      const job = await lockClaimedJob(tx, input.jobId, claim)
      if (!job) throw permanent(TenantDeletionErrorType.jobLost, `Deletion job ${input.jobId} is not held by this run`)
      if (!job.pending_keys) return
      await addCount(tx, job.id, objectsKey(BUCKET_STEPS[job.step_index]!), job.pending_keys.length)
      await setPendingKeys(tx, job.id, null)
    })
  }

  /** Batches until `untilMs` (epoch ms) or the end of the rows; answers where the job stands. */
  async function runBatches(input: TenantDeletionInput, claim: string, untilMs: number, beat: (p: DeletionProgress) => void): Promise<DeletionProgress> {
    for (;;) {
      const u = await unit(input, claim)
      if ('pending' in u) {
        await removePending(input, claim, u.pending)
        beat({ phase: 'buckets', stepIndex: -1, blocked: null })
        continue
      }
      beat(u.progress)
      if (u.progress.blocked || u.progress.phase === 'receipt' || Date.now() > untilMs) return u.progress
    }
  }

  return { underClaim, runBatches }
}

export function tenantDeletionActivities(deps: ActivityDeps) {
  const { sql, log, config } = deps
  const { underClaim, runBatches } = deletionBatches(deps)
  return {
    async claimTenantDeletion(input: TenantDeletionInput, claim: string): Promise<DeletionProgress> {
      const job = await claimDeletionJob(sql, input.jobId, claim)
      if (job) {
        log.info('tenant deletion claimed', { tenantId: input.tenantId, jobId: job.id, phase: job.phase, stepIndex: job.step_index, attempts: job.attempts })
        return progressOf(job)
      }
      const current = await findDeletionJob(sql, input.tenantId, input.jobId)
      if (current?.status === 'succeeded' || current?.status === 'blocked') return progressOf(current)
      throw permanent(TenantDeletionErrorType.jobLost, `Deletion job ${input.jobId} cannot be claimed (${current?.status ?? 'gone'})`)
    },

    /** Sessions, tokens and single sign-on end at once; the final event is written in the same commit. */
    async revokeTenantCredentials(input: TenantDeletionInput, claim: string): Promise<DeletionProgress> {
      const r = await underClaim(input, claim, async (tx, job) => {
        const sessions = await revokeTenantSessions(tx, input.tenantId)
        const apiKeys = await revokeTenantApiKeys(tx, input.tenantId)
        // Their rows go in the rows phase; their digests stay, so a token presented after answers TOKEN_NOT_FOUND.
        await retireCredentials(tx, 'tenant_deleted', await tenantApiKeyDigests(tx, input.tenantId))
        const sso = await disableTenantSsoConnections(tx, input.tenantId)
        await addCount(tx, job.id, 'credential:sessions', sessions)
        await addCount(tx, job.id, 'credential:api_keys', apiKeys)
        await addCount(tx, job.id, 'credential:sso_connections', sso)
        // Only a tenant with an endpoint to tell gets the event (and the job waits for its delivery).
        if (!job.final_event_id && (await endpointsForEvent(tx, input.tenantId, 'tenant.deleted')).length > 0) {
          const event = await publishEvent(tx, input.tenantId, 'tenant.deleted', { tenantId: input.tenantId, deletionJobId: job.id })
          await setFinalEvent(tx, job.id, event.id)
        }
        await moveCursor(tx, job.id, 'credentials', 1)
        log.info('tenant credentials revoked', { tenantId: input.tenantId, jobId: job.id, sessions, apiKeys, sso })
        return { phase: 'credentials', stepIndex: 1, blocked: null } satisfies DeletionProgress
      })
      return r
    },

    /** True once the final event reached every endpoint's last attempt, or waited out its allowance. */
    async finalEventSettled(input: TenantDeletionInput, _claim: string): Promise<boolean> {
      const job = await findDeletionJob(sql, input.tenantId, input.jobId)
      if (!job?.final_event_id) return true
      const s = await eventDeliveriesSettled(sql, job.final_event_id)
      return (s.dispatched && s.pending === 0) || s.age_seconds >= config.TENANT_DELETION_FINAL_EVENT_WAIT_SECONDS
    },

    async disableTenantWebhooks(input: TenantDeletionInput, claim: string): Promise<DeletionProgress> {
      return underClaim(input, claim, async (tx, job) => {
        await addCount(tx, job.id, 'credential:webhook_endpoints', await disableTenantEndpoints(tx, input.tenantId))
        await moveCursor(tx, job.id, 'buckets', 0)
        return { phase: 'buckets', stepIndex: 0, blocked: null } satisfies DeletionProgress
      })
    },

    /** Batches for up to TENANT_DELETION_CALL_MS, one heartbeat each; answers where the job stands. */
    async deleteTenantBatches(input: TenantDeletionInput, claim: string): Promise<DeletionProgress> {
      const ctx = Context.current()
      const resumedFrom = ctx.info.heartbeatDetails as DeletionProgress | undefined
      if (resumedFrom) log.info('tenant deletion resumes', { tenantId: input.tenantId, jobId: input.jobId, attempt: ctx.info.attempt, ...resumedFrom })
      // One call grows the workflow's history by one activity: long enough that it stays small, short enough that a
      // blocked or finished step is seen soon (TENANT_DELETION_CALL_MS).
      return runBatches(input, claim, Date.now() + config.TENANT_DELETION_CALL_MS, (p) => ctx.heartbeat(p))
    },

    /** Checks that nothing of the tenant remains, signs the receipt, records it and removes the tenant, in one commit. */
    async writeDeletionReceipt(input: TenantDeletionInput, claim: string): Promise<DeletionProgress> {
      const job = await findDeletionJob(sql, input.tenantId, input.jobId)
      if (!job) throw permanent(TenantDeletionErrorType.jobLost, `Deletion job ${input.jobId} is gone`)
      const buckets = await Promise.all(
        BUCKET_STEPS.map(async (kind) => {
          const b = job.buckets[kind]
          const exists = b ? await bucketExists(s3ForRegion(deps, b.regionId), b.name) : false
          return { kind, bucket: b?.name ?? null, objectsDeleted: job.counts[objectsKey(kind)] ?? 0, exists }
        }),
      )
      const tables = await Promise.all(
        TABLE_STEPS.map(async (table) => ({
          table,
          rowsDeleted: job.counts[rowsKey(table)] ?? 0,
          remaining: await remainingTenantRows(sql, table, input.tenantId),
        })),
      )
      return underClaim(input, claim, async (tx, locked) => {
        if (tables.some((t) => t.remaining > 0) || buckets.some((b) => b.exists)) {
          const rounds = (locked.counts['verify:rounds'] ?? 0) + 1
          const left = [...tables.filter((t) => t.remaining > 0).map((t) => t.table), ...buckets.filter((b) => b.exists).map((b) => b.bucket)]
          if (rounds > VERIFY_ROUNDS)
            throw permanent(TenantDeletionErrorType.verificationFailed, `Still there after ${VERIFY_ROUNDS} rounds: ${left.join(', ')}`)
          log.warn('tenant deletion found data left; going round again', { tenantId: input.tenantId, jobId: locked.id, left })
          await addCount(tx, locked.id, 'verify:rounds', 1)
          await moveCursor(tx, locked.id, 'buckets', 0)
          return { phase: 'buckets', stepIndex: 0, blocked: null } satisfies DeletionProgress
        }
        const completedAt = new Date()
        const receipt: DeletionReceipt = {
          version: 1,
          tenantId: input.tenantId,
          jobId: locked.id,
          requestedAt: locked.created_at.toISOString(),
          completedAt: completedAt.toISOString(),
          credentials: {
            sessionsRevoked: locked.counts['credential:sessions'] ?? 0,
            apiKeysRevoked: locked.counts['credential:api_keys'] ?? 0,
            ssoConnectionsDisabled: locked.counts['credential:sso_connections'] ?? 0,
            webhookEndpointsDisabled: locked.counts['credential:webhook_endpoints'] ?? 0,
            finalEventId: locked.final_event_id,
          },
          tables,
          retained: Object.entries(RETAINED_TABLES).map(([table, reason]) => ({ table, reason })),
          buckets,
          backups: {
            retentionDays: config.BACKUP_RETENTION_DAYS,
            lastBackupExpiresAt: lastBackupExpiry(completedAt, config.BACKUP_RETENTION_DAYS).toISOString(),
          },
        }
        const signed = signReceipt(config, receipt)
        // The entries outlive the tenant (AUDIT_RETENTION_DAYS) without their personal part; the chain still verifies.
        // The rows phase blanked them in batches; what was appended since (this job's own entries) is blanked here, and a
        // tail longer than a batch goes back to that step rather than into this one commit.
        const tail = await eraseTenantPersonalBatch(tx, input.tenantId, locked.audit_erased_through, config.TENANT_DELETION_BATCH_ROWS)
        await addCount(tx, locked.id, auditBlankedKey, tail.blanked)
        await setAuditCursor(tx, locked.id, tail.through)
        if (tail.walked >= config.TENANT_DELETION_BATCH_ROWS) {
          await moveCursor(tx, locked.id, 'rows', TABLE_STEPS.length)
          return { phase: 'rows', stepIndex: TABLE_STEPS.length, blocked: null } satisfies DeletionProgress
        }
        await recordAudit(tx, workflowActor(), {
          action: 'tenant.deleted',
          tenantId: input.tenantId,
          target: { type: 'tenant', id: input.tenantId },
          details: { jobId: locked.id, receiptSha256: signed.sha256, receipt: signed.envelope },
        })
        await insertTenantTombstone(tx, { tenantId: input.tenantId, jobId: locked.id, receiptSha256: signed.sha256 })
        await deleteTenantRow(tx, input.tenantId)
        await markJobSucceeded(tx, locked.id, { ...signed, receipt })
        log.info('tenant deleted', { tenantId: input.tenantId, jobId: locked.id, receiptSha256: signed.sha256 })
        return { phase: 'done', stepIndex: 0, blocked: null } satisfies DeletionProgress
      })
    },

    async failTenantDeletion(input: TenantDeletionInput, _claim: string, reason: string): Promise<void> {
      await markJobFailed(sql, input.jobId, reason)
    },
  }
}
