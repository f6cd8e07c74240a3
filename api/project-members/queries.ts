import type { Db } from '../platform/db'
import type { Permission, ProjectRole, Role } from '../identity/permissions'
import { microsecondText, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export interface ProjectMemberRow {
  id: string
  tenant_id: string
  project_id: string
  membership_id: string
  user_id: string
  email: string
  tenant_role: Role
  role: ProjectRole
  grant_points: Permission[]
  deny_points: Permission[]
  expires_at: Date | null
  granted_by: string | null
  version: number
  created_at: Date
  updated_at: Date
}

// Joined with the tenant membership and the account: the tenant role is half of what the member holds here.
const COLUMNS = `pm.id, pm.tenant_id, pm.project_id, pm.membership_id, pm.user_id, u.email, m.role as tenant_role, pm.role,
  pm.grant_points, pm.deny_points, pm.expires_at, pm.granted_by, pm.version, pm.created_at, pm.updated_at`
const FROM = 'project_members pm join memberships m on m.id = pm.membership_id join users u on u.id = pm.user_id'

export interface ProjectMemberFields {
  role: ProjectRole
  grant: Permission[]
  deny: Permission[]
  expiresAt: Date | null
  grantedBy: string
}

export async function insertProjectMember(
  db: Db,
  k: { tenantId: string; projectId: string; membershipId: string; userId: string } & ProjectMemberFields,
): Promise<string | undefined> {
  const [row] = await db<{ id: string }[]>`
    insert into project_members (tenant_id, project_id, membership_id, user_id, role, grant_points, deny_points, expires_at, granted_by)
    values (${k.tenantId}, ${k.projectId}, ${k.membershipId}, ${k.userId}, ${k.role}, ${k.grant}, ${k.deny}, ${k.expiresAt}, ${k.grantedBy})
    on conflict (project_id, user_id) do nothing
    returning id`
  return row?.id
}

export async function findProjectMember(db: Db, tenantId: string, projectId: string, userId: string): Promise<ProjectMemberRow | undefined> {
  const [row] = await db<ProjectMemberRow[]>`
    select ${db.unsafe(COLUMNS)} from ${db.unsafe(FROM)}
     where pm.tenant_id = ${tenantId} and pm.project_id = ${projectId} and pm.user_id = ${userId}`
  return row
}

/** The row, locked until the caller's transaction ends (a PATCH or a removal decides on what it read). */
export async function lockProjectMember(db: Db, tenantId: string, projectId: string, userId: string): Promise<ProjectMemberRow | undefined> {
  const [row] = await db<ProjectMemberRow[]>`
    select ${db.unsafe(COLUMNS)} from ${db.unsafe(FROM)}
     where pm.tenant_id = ${tenantId} and pm.project_id = ${projectId} and pm.user_id = ${userId}
       for update of pm`
  return row
}

export function listProjectMembers(db: Db, tenantId: string, projectId: string, after: CreatedCursor | null, limit: number) {
  const cursor = newestFirstAfter(db, after)
  return db<(ProjectMemberRow & { cursor_at: string })[]>`
    select * from (
      select ${db.unsafe(COLUMNS)}, ${db.unsafe(microsecondText('pm.created_at'))} as cursor_at
        from ${db.unsafe(FROM)}
       where pm.tenant_id = ${tenantId} and pm.project_id = ${projectId}
    ) pm
     where true ${cursor}
     order by created_at desc, id desc
     limit ${limit}`
}

/** Run after lockProjectMember in the same transaction. */
export async function updateProjectMember(db: Db, id: string, f: ProjectMemberFields): Promise<void> {
  await db`
    update project_members
       set role = ${f.role}, grant_points = ${f.grant}, deny_points = ${f.deny}, expires_at = ${f.expiresAt}, granted_by = ${f.grantedBy},
           version = version + 1, updated_at = now()
     where id = ${id}`
}

export async function deleteProjectMember(db: Db, id: string): Promise<void> {
  await db`delete from project_members where id = ${id}`
}

/** A membership as its expiry notices name it: the member, the project by id and name, the role and the expiry. */
export interface ExpiryNoticeRow {
  id: string
  tenant_id: string
  project_id: string
  project_name: string
  user_id: string
  role: ProjectRole
  expires_at: Date
  version: number
}

/** Housekeeping: memberships of active tenant members whose expiry is within `within` and not yet warned for, marked
 *  warned for that expiry, in bounded batches; run in the transaction that writes the warnings. Rows another run
 *  holds are skipped (it warns them). A membership deleted before this runs (the member left the project or the
 *  tenant) is simply not there. */
export async function takeExpiryWarnings(tx: Db, within: string, limit: number): Promise<ExpiryNoticeRow[]> {
  return tx<ExpiryNoticeRow[]>`
    with due as (
      select pm.id from project_members pm join memberships m on m.id = pm.membership_id
       where pm.expires_at > now() and pm.expires_at <= now() + ${within}::interval
         and pm.expiry_warned_for is distinct from pm.expires_at
         and m.status = 'active' and (m.expires_at is null or m.expires_at > now())
       order by pm.expires_at
       limit ${limit}
         for update of pm skip locked),
    w as (update project_members pm set expiry_warned_for = pm.expires_at from due where pm.id = due.id
          returning pm.id, pm.tenant_id, pm.project_id, pm.user_id, pm.role, pm.expires_at, pm.version)
    select w.*, p.name as project_name from w join projects p on p.id = w.project_id
     order by w.user_id`
}

/** Housekeeping: expired memberships, deleted in bounded batches (they already grant nothing), with what the
 *  expired notice names; run in the transaction that writes those notices. */
export async function purgeExpiredProjectMembers(tx: Db, limit: number): Promise<ExpiryNoticeRow[]> {
  return tx<ExpiryNoticeRow[]>`
    with d as (
      delete from project_members where id in (
        select id from project_members where expires_at <= now() order by expires_at limit ${limit} for update skip locked)
      returning id, tenant_id, project_id, user_id, role, expires_at, version)
    select d.*, p.name as project_name from d join projects p on p.id = d.project_id
     order by d.user_id`
}

/** The user's project memberships in one tenant that have not expired: what they hold beyond the tenant role in each
 *  project (api/project-members/reach.ts works out which projects' work they see). */
export function liveMembershipsOf(db: Db, tenantId: string, userId: string) {
  return db<Pick<ProjectMemberRow, 'project_id' | 'role' | 'grant_points' | 'deny_points'>[]>`
    select project_id, role, grant_points, deny_points from project_members
     where tenant_id = ${tenantId} and user_id = ${userId} and (expires_at is null or expires_at > now())`
}

/** Which rows of project-scoped work a list may show (api/project-members/reach.ts listReach decides it): one project's,
 *  none, or tenant-wide ones or not with all projects' but some, or only some. */
export type Reach =
  | { kind: 'project'; projectId: string }
  | { kind: 'spread'; tenantWide: boolean; projects: { all: true; except: string[] } | { all: false; only: string[] } }
  | { kind: 'none' }

/** The list predicate for a table with a `project_id` column (null: tenant-wide), to follow its tenant condition. One
 *  project's list is a plain equality, which the tables' (tenant_id, project_id, created_at, id) indexes serve. */
export function projectReachClause(db: Db, r: Reach) {
  if (r.kind === 'project') return db`and project_id = ${r.projectId}::uuid`
  if (r.kind === 'none') return db`and false`
  const wide = r.tenantWide ? db`project_id is null` : db`false`
  const projects = r.projects.all
    ? db`(project_id is not null and project_id <> all(${r.projects.except}::uuid[]))`
    : db`project_id = any(${r.projects.only}::uuid[])`
  return db`and (${wide} or ${projects})`
}
