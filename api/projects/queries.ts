import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export interface ProjectRow {
  id: string
  tenant_id: string
  name: string
  slug: string
  description: string | null
  created_by: string | null
  archived: boolean
  archived_at: Date | null
  version: number
  created_at: Date
  updated_at: Date
}

export interface ProjectFields {
  name: string
  slug: string
  description: string | null
}

const COLUMNS = 'id, tenant_id, name, slug, description, created_by, archived, archived_at, version, created_at, updated_at'

export async function insertProject(db: Db, tenantId: string, createdBy: string, p: ProjectFields): Promise<ProjectRow> {
  const [row] = await db<ProjectRow[]>`
    insert into projects (tenant_id, name, slug, description, created_by)
    values (${tenantId}, ${p.name}, ${p.slug}, ${p.description}, ${createdBy})
    returning ${db.unsafe(COLUMNS)}`
  return row!
}

export async function findProject(db: Db, tenantId: string, id: string): Promise<ProjectRow | undefined> {
  const [row] = await db<ProjectRow[]>`select ${db.unsafe(COLUMNS)} from projects where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** The row, locked until the caller's transaction ends (a PATCH or an archive decides on what it read). */
export async function lockProject(db: Db, tenantId: string, id: string): Promise<ProjectRow | undefined> {
  const [row] = await db<ProjectRow[]>`select ${db.unsafe(COLUMNS)} from projects where tenant_id = ${tenantId} and id = ${id} for update`
  return row
}

export function listProjects(db: Db, tenantId: string, archived: boolean | null, after: CreatedCursor | null, limit: number) {
  return db<(ProjectRow & { cursor_at: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${db.unsafe(CURSOR_AT)}
      from projects
     where tenant_id = ${tenantId} ${archived === null ? db`` : db`and archived = ${archived}`} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** Run after lockProject in the same transaction: the version it compared is still current. */
export async function updateProject(db: Db, tenantId: string, id: string, p: ProjectFields): Promise<ProjectRow> {
  const [row] = await db<ProjectRow[]>`
    update projects
       set name = ${p.name}, slug = ${p.slug}, description = ${p.description}, version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id}
    returning ${db.unsafe(COLUMNS)}`
  return row!
}

export async function archiveProject(db: Db, tenantId: string, id: string): Promise<ProjectRow> {
  const [row] = await db<ProjectRow[]>`
    update projects
       set archived = true, archived_at = now(), version = version + 1, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id}
    returning ${db.unsafe(COLUMNS)}`
  return row!
}
