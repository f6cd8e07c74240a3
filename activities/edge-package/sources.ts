// What a package is built from, read through the owning domains' queries (model versions, embodiment profiles) and
// shown in the shapes the manifest uses: the one place that knows those domains' row layouts. Only the build's plan
// (plan.ts) reads them, so it lives beside it; the build depends on profiles and model versions, never the reverse.
import { findEmbodimentProfile, type EmbodimentProfileRow } from '../../api/embodiment-profiles/queries'
import type { ModelSource, PackageManifest } from '../../api/edge-packages/manifest'
import { findModelVersion, type ModelVersionRow } from '../../api/model-versions/queries'
import type { Db } from '../../api/platform/db'

export const embodimentOf = (p: EmbodimentProfileRow): PackageManifest['embodiment'] => ({
  id: p.id,
  name: p.name,
  robotType: p.robot_type,
  controlRateHz: p.control_rate_hz,
  observationFeatures: p.observation_features,
  actionFeatures: p.action_features,
})

/** The source as the manifest names it; the one object of a checkpoint or training job is its path. */
export function sourceOf(v: ModelVersionRow): ModelSource {
  const s = v.source
  if (s.kind === 'model_bundle') return { kind: 'model_bundle', prefix: s.prefix ?? '', objects: (s.objects ?? []).map((o) => o.key) }
  if (s.kind === 'training_job') return { kind: 'training_job', trainingJobId: s.trainingJobId, path: v.objects[0]?.key ?? '' }
  return { kind: 'imported_checkpoint', path: s.path }
}

export interface ModelObject {
  key: string
  sizeBytes: number
  sha256: string | null
}

/** The objects validation measured, in the bucket and region it measured them. */
export const modelObjectsOf = (v: ModelVersionRow): { regionId: string | null; bucket: string | null; objects: ModelObject[] } => ({
  regionId: v.region_id,
  bucket: v.bucket,
  objects: v.objects.map((o) => ({ key: o.key, sizeBytes: Number(o.sizeBytes ?? 0), sha256: o.sha256 ?? null })),
})

export async function loadSources(db: Db, tenantId: string, modelVersionId: string, profileId: string) {
  const [version, profile] = await Promise.all([findModelVersion(db, tenantId, modelVersionId), findEmbodimentProfile(db, tenantId, profileId)])
  return { version, profile }
}
