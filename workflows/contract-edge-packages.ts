// The edge-package part of the Temporal contract (see contract.ts for the rules): names, ids and payloads the API,
// the worker and the build workflow share. Types and constants only.
import type { PackageManifest } from '../api/edge-packages/manifest'

export const EdgePackageWorkflowType = { build: 'buildEdgePackageWorkflow' } as const

/** One build per package; the arch in the id lets an operator tell the builds of one tenant apart at a glance. */
export const edgePackageWorkflowId = (tenantId: string, packageId: string, targetArch: string) => `edge-package/${tenantId}/${targetArch}/${packageId}`

export const EdgePackageErrorType = {
  /** The package row is gone or no longer queued/building: nothing left to do. */
  packageNotFound: 'EdgePackageNotFound',
  /** A model object is missing or its bytes differ from what validation measured: a retry reads the same. */
  sourceChanged: 'EdgePackageSourceChanged',
  /** The tenant's export bucket is not ready. */
  exportBucketMissing: 'EdgePackageExportBucketMissing',
} as const

/** One model object as the archive carries it: read from `bucket/key`, written to `model/<path>`. */
export interface PlannedObject {
  key: string
  path: string
  sizeBytes: number
  /** What validation measured, when it did: the build refuses bytes that differ. */
  sha256: string | null
}

/** Everything the archive is a function of. It is computed once and kept in the workflow history, so every
 *  retry of the archive activity packs exactly the same thing and produces byte-identical output. */
export interface EdgePackagePlan {
  tenantId: string
  packageId: string
  workflowId: string
  regionId: string
  sourceBucket: string
  objects: PlannedObject[]
  artifactBucket: string
  artifactKey: string
  manifest: PackageManifest
  /** The request as understood: the provenance's externalParameters. */
  request: Record<string, unknown>
  gzipLevel: number
}

export interface EdgePackageArtifact {
  bucket: string
  key: string
  sizeBytes: number
  sha256: string
}

/** Heartbeat details of the archive activity; also written to the row for GET. */
export interface EdgePackageProgress {
  bytesDone: number
  bytesTotal: number
}

export interface BuildEdgePackageInput {
  tenantId: string
  packageId: string
}
