import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import { projectReachClause, type Reach } from '../project-members/queries'
import type { ModelFormat, ModelSourceInput, ModelVersionStatus, VersionObject } from './model'

export interface ModelVersionRow {
  id: string
  tenant_id: string
  name: string
  format: ModelFormat
  status: ModelVersionStatus
  failure_reason: string | null
  source_kind: ModelSourceInput['kind']
  /** The source as declared: { kind, path } | { kind, prefix, objects } | { kind, trainingJobId }. */
  source: ModelSourceInput
  training_job_id: string | null
  /** Full keys in `bucket`; sizes and digests as declared, then as measured once ready. */
  objects: VersionObject[]
  region_id: string | null
  bucket: string | null
  total_bytes: number | null
  validated_at: Date | null
  project_id: string | null
  created_at: Date
  updated_at: Date
}

const COLUMNS = `id, tenant_id, name, format, status, failure_reason, source_kind, source, training_job_id, objects, region_id, bucket,
  total_bytes, validated_at, project_id, created_at, updated_at`

export async function insertModelVersion(
  db: Db,
  v: {
    tenantId: string
    name: string
    format: ModelFormat
    source: ModelSourceInput
    trainingJobId: string | null
    objects: VersionObject[]
    projectId: string | null
  },
): Promise<ModelVersionRow> {
  const [row] = await db<ModelVersionRow[]>`
    insert into model_versions (tenant_id, project_id, name, format, source_kind, source, training_job_id, objects)
    values (${v.tenantId}, ${v.projectId}, ${v.name}, ${v.format}, ${v.source.kind}, ${db.json(v.source as never)}, ${v.trainingJobId},
            ${db.json(v.objects as never)})
    returning ${db.unsafe(COLUMNS)}`
  return row!
}

/** One version of this tenant with its source and objects (and, once validated, their bucket, sizes and digests),
 *  or undefined. api/edge-packages builds from what this returns. */
export async function findModelVersion(db: Db, tenantId: string, id: string): Promise<ModelVersionRow | undefined> {
  const [row] = await db<ModelVersionRow[]>`select ${db.unsafe(COLUMNS)} from model_versions where tenant_id = ${tenantId} and id = ${id}`
  return row
}

export function listModelVersions(
  db: Db,
  tenantId: string,
  reach: Reach,
  f: { status?: ModelVersionStatus; format?: ModelFormat },
  after: CreatedCursor | null,
  limit: number,
) {
  return db<(ModelVersionRow & { cursor_at: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${db.unsafe(CURSOR_AT)}
      from model_versions
     where tenant_id = ${tenantId} ${projectReachClause(db, reach)}
       and (${f.status ?? null}::text is null or status = ${f.status ?? null})
       and (${f.format ?? null}::text is null or format = ${f.format ?? null}) ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** draft | failed → validating, recording where the objects are checked; undefined when the status did not allow it. */
export async function markValidating(db: Db, tenantId: string, id: string, at: { regionId: string; bucket: string }) {
  const [row] = await db<ModelVersionRow[]>`
    update model_versions
       set status = 'validating', failure_reason = null, region_id = ${at.regionId}, bucket = ${at.bucket}, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status in ('draft', 'failed')
    returning ${db.unsafe(COLUMNS)}`
  return row
}

/** Back to where it was when the workflow could not be started. */
export const unmarkValidating = (db: Db, tenantId: string, id: string, previous: Pick<ModelVersionRow, 'status' | 'failure_reason'>) =>
  db`update model_versions set status = ${previous.status}, failure_reason = ${previous.failure_reason}, updated_at = now()
      where tenant_id = ${tenantId} and id = ${id} and status = 'validating'`

/** validating → ready with the measured objects; undefined when it is not validating (a repeated activity). */
export async function markReady(db: Db, tenantId: string, id: string, objects: VersionObject[], totalBytes: number) {
  const [row] = await db<ModelVersionRow[]>`
    update model_versions
       set status = 'ready', objects = ${db.json(objects as never)}, total_bytes = ${totalBytes}, validated_at = now(), updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status = 'validating'
    returning ${db.unsafe(COLUMNS)}`
  return row
}

/** validating → failed with the reason; undefined when it is not validating. */
export async function markFailed(db: Db, tenantId: string, id: string, reason: string) {
  const [row] = await db<ModelVersionRow[]>`
    update model_versions set status = 'failed', failure_reason = ${reason}, validated_at = now(), updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status = 'validating'
    returning ${db.unsafe(COLUMNS)}`
  return row
}
