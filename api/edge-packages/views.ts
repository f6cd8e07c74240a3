// Rows as the API shows them. A ready package carries a fresh presigned download URL on every read.
import type { ServiceDeps } from '../platform/deps'
import { listBuckets } from '../storage/queries'
import { s3For } from '../storage/s3'
import { regionOf } from '../storage/service'
import { imageLines } from './image-lines'
import { DEFAULT_PORTS } from './manifest'
import type { EdgeInferencePackage } from './model'
import type { PackageRow, RunRow } from './queries'

type TenantBuckets = () => ReturnType<typeof listBuckets>

async function artifactOf(config: ServiceDeps['config'], bucketsOf: TenantBuckets, row: PackageRow): Promise<EdgeInferencePackage['artifact']> {
  if (row.status !== 'ready' || !row.artifact_bucket || !row.artifact_key) return null
  const bucket = (await bucketsOf()).find((b) => b.name === row.artifact_bucket)
  const seconds = config.PACKAGE_DOWNLOAD_URL_SECONDS
  const now = new Date()
  const downloadUrl = await s3For(regionOf(config, bucket?.region_id ?? 'local')).presignedGetObject(row.artifact_bucket, row.artifact_key, seconds, {}, now)
  return {
    bucket: row.artifact_bucket,
    key: row.artifact_key,
    sizeBytes: row.size_bytes!,
    sha256: row.sha256!,
    downloadUrl,
    downloadUrlExpiresAt: new Date(now.getTime() + seconds * 1000).toISOString(),
  }
}

/** The DTO of one tenant's packages. The tenant's bucket list (where each artifact's region is) is read at most once,
 *  however many ready packages a page shows. */
export function packageViews({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, tenantId: string) {
  let buckets: ReturnType<TenantBuckets> | undefined
  const bucketsOf: TenantBuckets = () => (buckets ??= listBuckets(sql, tenantId))
  return async (row: PackageRow): Promise<EdgeInferencePackage> => ({
    id: row.id,
    status: row.status,
    failureReason: row.failure_reason,
    modelVersionId: row.model_version_id,
    embodimentProfileId: row.embodiment_profile_id,
    mode: row.mode,
    strategyKey: row.strategy_key,
    remotePolicyHost: row.remote_policy_host,
    remotePolicyPort: row.remote_policy_port,
    steps: row.steps,
    targetArch: row.target_arch,
    imageLine: imageLines[row.target_arch],
    wireProtocols: row.wire_protocols.map((name) => ({ name, port: DEFAULT_PORTS[name] })),
    useFakeTransport: row.use_fake_transport,
    workflowId: row.workflow_id,
    progress: { bytesDone: row.progress_bytes, bytesTotal: row.total_bytes },
    artifact: await artifactOf(config, bucketsOf, row),
    projectId: row.project_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  })
}

export const toRunDto = (r: RunRow) => ({
  id: r.id,
  packageId: r.package_id,
  stepsDone: r.steps_done,
  latencyMs: r.latency_p50_ms === null ? null : { p50: r.latency_p50_ms, p99: r.latency_p99_ms ?? r.latency_p50_ms },
  contractViolations: r.contract_violations,
  inferences: r.inferences,
  underruns: r.underruns,
  queueDepth: r.queue_depth_max === null ? null : { max: r.queue_depth_max, mean: r.queue_depth_mean ?? 0 },
  loopJitterMs: r.loop_jitter_p99_ms === null ? null : { p99: r.loop_jitter_p99_ms },
  exitReason: r.exit_reason as 'completed',
  violations: r.violations,
  startedAt: r.started_at.toISOString(),
  finishedAt: r.finished_at.toISOString(),
  reportedBy: r.reported_by,
  createdAt: r.created_at.toISOString(),
})
