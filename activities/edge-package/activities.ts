// The build's activities. begin fixes the plan; build writes the archive (long, heartbeating its progress in bytes);
// finish and fail set the outcome and publish its event in the same transaction.
import { ApplicationFailure, Context } from '@temporalio/activity'
import { markBuilding, markFailed, markReady, recordProgress } from '../../api/edge-packages/queries'
import { signingPrivateKey } from '../../api/edge-packages/signing'
import { publishEvent } from '../../api/events/service'
import { notifyWatchers } from '../../api/notifications/service'
import { isUnreachable } from '../../api/storage/s3'
import { recordUsage } from '../../api/usage/record'
import { EdgePackageErrorType, type EdgePackageArtifact, type EdgePackagePlan } from '../../workflows/contract-edge-packages'
import { StorageErrorType } from '../../workflows/contract-storage'
import type { ActivityDeps } from '../deps'
import { writeArchive } from './archive'
import { s3ForRegion } from '../storage-provision'
import { abortIncompleteUploads } from './multipart'
import { planEdgePackage } from './plan'
import { runtimeFilesFor } from './runtime'

const PROGRESS_EVERY_MS = 1000
// The attempt whose failure is final, for any failure but an unreachable region (see buildEdgePackageArchive).
const FINAL_ATTEMPT = 5

export function edgePackageActivities(deps: ActivityDeps) {
  return {
    async beginEdgePackageBuild(tenantId: string, packageId: string): Promise<EdgePackagePlan> {
      const plan = await planEdgePackage(deps, tenantId, packageId)
      const total = plan.objects.reduce((n, o) => n + o.sizeBytes, 0)
      if (!(await markBuilding(deps.sql, tenantId, packageId, total))) {
        throw ApplicationFailure.create({
          type: EdgePackageErrorType.packageNotFound,
          message: `Edge package ${packageId} is no longer buildable`,
          nonRetryable: true,
        })
      }
      return plan
    },

    /** Idempotent under retries: the previous attempt's unfinished upload of the same key is removed first, and the
     *  plan fixes every byte, so a retry that follows a completed upload writes the identical object again. Retried
     *  without a count while the region cannot be reached (the workflow bounds the wait); any other failure is final
     *  from the fifth attempt. */
    async buildEdgePackageArchive(plan: EdgePackagePlan): Promise<EdgePackageArtifact> {
      const ctx = Context.current()
      const s3 = s3ForRegion(deps, plan.regionId)
      try {
        const aborted = await abortIncompleteUploads(s3, plan.artifactBucket, plan.artifactKey)
        if (aborted > 0)
          deps.log.info('edge package build resumes after an interrupted upload', { packageId: plan.packageId, attempt: ctx.info.attempt, aborted })
        const bytesTotal = plan.objects.reduce((n, o) => n + o.sizeBytes, 0)
        let last = 0
        const started = performance.now()
        const artifact = await writeArchive({
          s3,
          plan,
          signingKey: signingPrivateKey(deps.config),
          runtime: runtimeFilesFor(plan.manifest),
          onProgress: (bytesDone) => {
            ctx.heartbeat({ bytesDone, bytesTotal })
            if (Date.now() - last < PROGRESS_EVERY_MS) return
            last = Date.now()
            recordProgress(deps.sql, plan.tenantId, plan.packageId, bytesDone).catch((err) =>
              deps.log.warn('edge package progress not recorded', { error: String(err) }),
            )
          },
        })
        deps.activityMetrics.packageBuild('ready', (performance.now() - started) / 1000, artifact.sizeBytes)
        deps.log.info('edge package archived', { packageId: plan.packageId, attempt: ctx.info.attempt, sha256: artifact.sha256, sizeBytes: artifact.sizeBytes })
        return artifact
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err
        if (isUnreachable(err)) {
          deps.log.warn('storage region unreachable; the package build waits for it', {
            packageId: plan.packageId,
            regionId: plan.regionId,
            attempt: ctx.info.attempt,
          })
          throw ApplicationFailure.create({ type: StorageErrorType.providerUnavailable, message: 'The storage region cannot be reached', cause: err as Error })
        }
        if (ctx.info.attempt >= FINAL_ATTEMPT)
          throw ApplicationFailure.create({ message: (err as Error)?.message ?? String(err), cause: err as Error, nonRetryable: true })
        throw err
      }
    },

    async finishEdgePackageBuild(plan: EdgePackagePlan, artifact: EdgePackageArtifact): Promise<void> {
      await deps.sql.begin(async (tx) => {
        const row = await markReady(tx, plan.tenantId, plan.packageId, artifact)
        // Already ready: a retry of this activity after its commit.
        if (!row) return
        await publishEvent(tx, plan.tenantId, 'edge_package.ready', {
          packageId: row.id,
          modelVersionId: row.model_version_id,
          embodimentProfileId: row.embodiment_profile_id,
          targetArch: row.target_arch,
          mode: row.mode,
          sizeBytes: artifact.sizeBytes,
          sha256: artifact.sha256,
          projectId: row.project_id,
        })
        await notifyWatchers(tx, deps.keys, `edge_package:${row.id}`, 'edge_package.build_finished', {
          packageId: row.id,
          modelVersionId: row.model_version_id,
          targetArch: row.target_arch,
          status: 'ready',
        })
        // Metered in the transaction that makes the package ready: a build is counted exactly when it exists.
        const occurredAt = new Date()
        const base = { tenantId: plan.tenantId, projectId: row.project_id, occurredAt }
        await recordUsage(tx, { ...base, meter: 'edge_package.builds', quantity: 1, idempotencyKey: `edge_package.builds:${row.id}` })
        await recordUsage(tx, { ...base, meter: 'edge_package.bytes', quantity: artifact.sizeBytes, idempotencyKey: `edge_package.bytes:${row.id}` })
      })
    },

    async failEdgePackageBuild(tenantId: string, packageId: string, reason: string): Promise<void> {
      const failed = await deps.sql.begin(async (tx) => {
        const row = await markFailed(tx, tenantId, packageId, reason)
        if (!row) return false
        await publishEvent(tx, tenantId, 'edge_package.failed', {
          packageId: row.id,
          modelVersionId: row.model_version_id,
          embodimentProfileId: row.embodiment_profile_id,
          targetArch: row.target_arch,
          mode: row.mode,
          reason: reason.slice(0, 1000),
          projectId: row.project_id,
        })
        await notifyWatchers(tx, deps.keys, `edge_package:${row.id}`, 'edge_package.build_finished', {
          packageId: row.id,
          modelVersionId: row.model_version_id,
          targetArch: row.target_arch,
          status: 'failed',
        })
        return true
      })
      if (failed) deps.activityMetrics.packageBuild('failed')
    },
  }
}
