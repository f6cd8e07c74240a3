import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import { projectReachClause, type Reach } from '../project-members/queries'
import type { Feature } from './model'

export interface EmbodimentProfileRow {
  id: string
  tenant_id: string
  name: string
  robot_type: string
  control_rate_hz: number
  observation_features: Feature[]
  action_features: Feature[]
  version: number
  project_id: string | null
  created_at: Date
  updated_at: Date
}

export interface ProfileFields {
  name: string
  robotType: string
  controlRateHz: number
  observationFeatures: Feature[]
  actionFeatures: Feature[]
}

const COLUMNS = 'id, tenant_id, name, robot_type, control_rate_hz, observation_features, action_features, version, project_id, created_at, updated_at'

export async function insertEmbodimentProfile(db: Db, tenantId: string, projectId: string | null, p: ProfileFields): Promise<EmbodimentProfileRow> {
  const [row] = await db<EmbodimentProfileRow[]>`
    insert into embodiment_profiles (tenant_id, project_id, name, robot_type, control_rate_hz, observation_features, action_features)
    values (${tenantId}, ${projectId}, ${p.name}, ${p.robotType}, ${p.controlRateHz}, ${db.json(p.observationFeatures as never)},
            ${db.json(p.actionFeatures as never)})
    returning ${db.unsafe(COLUMNS)}`
  return row!
}

/** The profile a package is built for (api/edge-packages reads it here), or undefined outside the tenant. */
export async function findEmbodimentProfile(db: Db, tenantId: string, id: string): Promise<EmbodimentProfileRow | undefined> {
  const [row] = await db<EmbodimentProfileRow[]>`select ${db.unsafe(COLUMNS)} from embodiment_profiles where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** The row, locked until the caller's transaction ends (a PATCH merges onto what it read). */
export async function lockEmbodimentProfile(db: Db, tenantId: string, id: string): Promise<EmbodimentProfileRow | undefined> {
  const [row] = await db<EmbodimentProfileRow[]>`select ${db.unsafe(COLUMNS)} from embodiment_profiles where tenant_id = ${tenantId} and id = ${id} for update`
  return row
}

export function listEmbodimentProfiles(db: Db, tenantId: string, reach: Reach, after: CreatedCursor | null, limit: number) {
  return db<(EmbodimentProfileRow & { cursor_at: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${db.unsafe(CURSOR_AT)}
      from embodiment_profiles
     where tenant_id = ${tenantId} ${projectReachClause(db, reach)} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** Run after lockEmbodimentProfile in the same transaction: the version it compared is still current. */
export async function updateEmbodimentProfile(db: Db, tenantId: string, id: string, p: ProfileFields): Promise<EmbodimentProfileRow> {
  const [row] = await db<EmbodimentProfileRow[]>`
    update embodiment_profiles
       set name = ${p.name}, robot_type = ${p.robotType}, control_rate_hz = ${p.controlRateHz},
           observation_features = ${db.json(p.observationFeatures as never)}, action_features = ${db.json(p.actionFeatures as never)},
           version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id}
    returning ${db.unsafe(COLUMNS)}`
  return row!
}

export async function deleteEmbodimentProfile(db: Db, tenantId: string, id: string): Promise<boolean> {
  const rows = await db`delete from embodiment_profiles where tenant_id = ${tenantId} and id = ${id} returning 1`
  return rows.length > 0
}
