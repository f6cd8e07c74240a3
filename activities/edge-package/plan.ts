// The build's inputs, fixed once: the package row, its model version's measured objects, its embodiment profile,
// and where the artifact goes. Everything the archive depends on is in the plan (and so in the workflow history).
import { ApplicationFailure } from '@temporalio/activity'
import { imageLines } from '../../api/edge-packages/image-lines'
import { DEFAULT_PORTS, type PackageManifest } from '../../api/edge-packages/manifest'
import { findPackage, type PackageRow } from '../../api/edge-packages/queries'
import { embodimentOf, loadSources, modelObjectsOf, sourceOf } from './sources'
import { publicBase } from '../../api/platform/config'
import { bucketReadiness } from '../../api/storage/service'
import { EdgePackageErrorType, edgePackageWorkflowId, type EdgePackagePlan, type PlannedObject } from '../../workflows/contract-edge-packages'
import type { ActivityDeps } from '../deps'

const permanent = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true })

/** The archive's layout of the objects: relative to their longest common folder, so a checkpoint `ckpt/a/b.onnx`
 *  lands at `model/b.onnx` and a bundle keeps its own tree. */
export function relativePaths(keys: string[]): string[] {
  const dirs = keys.map((k) => k.split('/').slice(0, -1))
  let common = dirs[0] ?? []
  for (const d of dirs) {
    let i = 0
    while (i < common.length && d[i] === common[i]) i++
    common = common.slice(0, i)
  }
  return keys.map((k) => k.split('/').slice(common.length).join('/'))
}

/** The request as understood, as the DTO and the provenance show it. */
export const requestOf = (p: PackageRow) => ({
  modelVersionId: p.model_version_id,
  embodimentProfileId: p.embodiment_profile_id,
  mode: p.mode,
  strategyKey: p.strategy_key,
  remotePolicyHost: p.remote_policy_host,
  remotePolicyPort: p.remote_policy_port,
  steps: p.steps,
  targetArch: p.target_arch,
  wireProtocols: p.wire_protocols,
  useFakeTransport: p.use_fake_transport,
})

export async function planEdgePackage(deps: Omit<ActivityDeps, 'activityMetrics'>, tenantId: string, packageId: string): Promise<EdgePackagePlan> {
  const pkg = await findPackage(deps.sql, tenantId, packageId)
  if (!pkg) throw permanent(EdgePackageErrorType.packageNotFound, `Edge package ${packageId} does not exist`)
  const { version, profile } = await loadSources(deps.sql, tenantId, pkg.model_version_id, pkg.embodiment_profile_id)
  if (!version || !profile) throw permanent(EdgePackageErrorType.packageNotFound, 'The model version or embodiment profile is gone')
  const readiness = await bucketReadiness(deps.sql, tenantId)
  if (!('buckets' in readiness)) throw permanent(EdgePackageErrorType.exportBucketMissing, readiness.message)
  const { buckets } = readiness
  const exportBucket = buckets.find((b) => b.kind === 'export')!
  const general = buckets.find((b) => b.kind === 'general')!
  const measured = modelObjectsOf(version)
  const sorted = [...measured.objects].sort((a, b) => (a.key < b.key ? -1 : 1))
  const paths = relativePaths(sorted.map((o) => o.key))
  const objects: PlannedObject[] = sorted.map((o, i) => ({ key: o.key, path: paths[i]!, sizeBytes: o.sizeBytes, sha256: o.sha256 }))
  const line = imageLines[pkg.target_arch]
  const manifest: PackageManifest = {
    schema: 'rcp.edge-package/v1',
    packageId: pkg.id,
    modelVersion: { id: version.id, name: version.name, format: version.format, source: sourceOf(version) },
    embodiment: embodimentOf(profile),
    mode: pkg.mode,
    targetArch: pkg.target_arch,
    baseImage: line.baseImage,
    platform: line.platform,
    wireProtocols: pkg.wire_protocols.map((name) => ({ name, port: DEFAULT_PORTS[name] })),
    remotePolicy: pkg.mode === 'remote_ws' ? { host: pkg.remote_policy_host!, port: pkg.remote_policy_port! } : null,
    steps: pkg.steps,
    strategyKey: pkg.strategy_key,
    useFakeTransport: pkg.use_fake_transport,
    modelFiles: objects.map((o) => o.path),
    apiBase: publicBase(deps.config),
  }
  return {
    tenantId,
    packageId,
    workflowId: edgePackageWorkflowId(tenantId, packageId, pkg.target_arch),
    regionId: measured.regionId ?? exportBucket.region_id,
    sourceBucket: measured.bucket ?? general.name,
    objects,
    artifactBucket: exportBucket.name,
    artifactKey: `edge-packages/${pkg.id}/${pkg.target_arch}.tar.gz`,
    manifest,
    request: requestOf(pkg),
    gzipLevel: deps.config.PACKAGE_GZIP_LEVEL,
  }
}
