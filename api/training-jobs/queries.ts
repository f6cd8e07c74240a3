import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import { projectReachClause, type Reach } from '../project-members/queries'
import type { TrainingJobStatus } from './model'

export interface TrainingJobRow {
  id: string
  tenant_id: string
  name: string
  status: TrainingJobStatus
  output_artifact_path: string | null
  failure_reason: string | null
  created_at: Date
  completed_at: Date | null
  project_id: string | null
}

const COLUMNS = 'id, tenant_id, name, status, output_artifact_path, failure_reason, created_at, completed_at, project_id'

export async function insertTrainingJob(db: Db, tenantId: string, name: string, projectId: string | null): Promise<TrainingJobRow> {
  const [row] = await db<TrainingJobRow[]>`
    insert into training_jobs (tenant_id, name, project_id) values (${tenantId}, ${name}, ${projectId}) returning ${db.unsafe(COLUMNS)}`
  return row!
}

/** The job of this tenant (api/model-versions reads a job's output here), or undefined. */
export async function findTrainingJob(db: Db, tenantId: string, id: string): Promise<TrainingJobRow | undefined> {
  const [row] = await db<TrainingJobRow[]>`select ${db.unsafe(COLUMNS)} from training_jobs where tenant_id = ${tenantId} and id = ${id}`
  return row
}

export function listTrainingJobs(db: Db, tenantId: string, reach: Reach, status: TrainingJobStatus | undefined, after: CreatedCursor | null, limit: number) {
  return db<(TrainingJobRow & { cursor_at: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${db.unsafe(CURSOR_AT)}
      from training_jobs
     where tenant_id = ${tenantId} ${projectReachClause(db, reach)}
       and (${status ?? null}::text is null or status = ${status ?? null}) ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** Only a running job finishes, once: undefined when it is not running (or not this tenant's). */
export async function finishTrainingJob(
  db: Db,
  tenantId: string,
  id: string,
  f: { status: 'completed' | 'failed'; outputArtifactPath: string | null; reason: string | null },
) {
  const [row] = await db<TrainingJobRow[]>`
    update training_jobs
       set status = ${f.status}, output_artifact_path = ${f.outputArtifactPath}, failure_reason = ${f.reason}, completed_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status = 'running'
    returning ${db.unsafe(COLUMNS)}`
  return row
}
