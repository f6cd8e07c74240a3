import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'

export type HoldScopeKind = 'tenant' | 'member' | 'project'

export interface LegalHoldRow {
  id: string
  tenant_id: string
  matter: string
  reason: string
  scope_kind: HoldScopeKind
  user_id: string | null
  project_id: string | null
  created_by: string
  created_at: Date
  released_at: Date | null
  released_by: string | null
}

const COLUMNS = 'id, tenant_id, matter, reason, scope_kind, user_id, project_id, created_by, created_at, released_at, released_by'

export interface NewHold {
  tenantId: string
  matter: string
  reason: string
  kind: HoldScopeKind
  userId: string | null
  projectId: string | null
  createdBy: string
}

/** Inserts the hold only when its subject is there: a member of this tenant (any status but removed) or a project of
 *  this tenant (archived ones too). The check and the insert are one statement, so the answer cannot be stale;
 *  undefined means the subject is not there. */
export async function insertLegalHold(db: Db, h: NewHold): Promise<LegalHoldRow | undefined> {
  const [row] = await db<LegalHoldRow[]>`
    insert into legal_holds (tenant_id, matter, reason, scope_kind, user_id, project_id, created_by)
    select ${h.tenantId}, ${h.matter}, ${h.reason}, ${h.kind}, ${h.userId}::uuid, ${h.projectId}::uuid, ${h.createdBy}
     where case ${h.kind}::text
             when 'tenant' then true
             when 'member' then exists (
               select 1 from memberships m where m.tenant_id = ${h.tenantId} and m.user_id = ${h.userId}::uuid and m.status <> 'removed')
             when 'project' then exists (select 1 from projects p where p.tenant_id = ${h.tenantId} and p.id = ${h.projectId}::uuid)
           end
    returning ${db.unsafe(COLUMNS)}`
  return row
}

export async function findLegalHold(db: Db, tenantId: string, id: string): Promise<LegalHoldRow | undefined> {
  const [row] = await db<LegalHoldRow[]>`select ${db.unsafe(COLUMNS)} from legal_holds where tenant_id = ${tenantId} and id = ${id}`
  return row
}

export function listLegalHolds(db: Db, tenantId: string, active: boolean | null, after: CreatedCursor | null, limit: number) {
  return db<(LegalHoldRow & { cursor_at: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${db.unsafe(CURSOR_AT)}
      from legal_holds
     where tenant_id = ${tenantId} ${active === null ? db`` : active ? db`and released_at is null` : db`and released_at is not null`}
           ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** Releases an active hold; undefined when it was released already (the row lock makes two releases one). */
export async function releaseLegalHold(db: Db, tenantId: string, id: string, by: string): Promise<LegalHoldRow | undefined> {
  const [row] = await db<LegalHoldRow[]>`
    update legal_holds set released_at = now(), released_by = ${by}
     where tenant_id = ${tenantId} and id = ${id} and released_at is null
    returning ${db.unsafe(COLUMNS)}`
  return row
}

/** The active holds of one tenant that cover a subject, oldest first. A tenant-scope hold covers everything of the
 *  tenant; a member hold covers `userId`; a project hold covers `projectId`. With neither named, the subject is the
 *  tenant as a whole, which every active hold of it touches (deleting the tenant would delete what any of them keeps). */
export async function activeHolds(db: Db, tenantId: string, subject: { userId?: string; projectId?: string } = {}): Promise<LegalHoldRow[]> {
  const userId = subject.userId ?? null
  const projectId = subject.projectId ?? null
  const whole = userId === null && projectId === null
  return db<LegalHoldRow[]>`
    select ${db.unsafe(COLUMNS)} from legal_holds
     where tenant_id = ${tenantId} and released_at is null
       and (${whole} or scope_kind = 'tenant'
            or (scope_kind = 'member' and user_id = ${userId}::uuid)
            or (scope_kind = 'project' and project_id = ${projectId}::uuid))
     order by created_at, id`
}

/** Every active hold, in any tenant, that covers a person: a hold on them as a member, and a tenant-wide hold of a
 *  tenant they belong to (any membership but a removed one). What refuses their account's erasure. */
export async function activeHoldsOnUser(db: Db, userId: string): Promise<LegalHoldRow[]> {
  return db<LegalHoldRow[]>`
    select ${db.unsafe(COLUMNS)} from legal_holds h
     where h.released_at is null
       and ((h.scope_kind = 'member' and h.user_id = ${userId})
            or (h.scope_kind = 'tenant'
                and exists (select 1 from memberships m where m.tenant_id = h.tenant_id and m.user_id = ${userId} and m.status <> 'removed')))
     order by h.created_at, h.id`
}

/** What every active hold keeps from the retention purges, read once per purge batch: the tenants held whole, the
 *  members held (tenant and user), the projects held, and the people whose own account trail is held (members held
 *  anywhere, and the members of a tenant held whole). The purges (audit, events, webhook messages, idempotency keys)
 *  take it as a plain value, so they need not know this table. */
export interface HeldCoverage {
  tenantIds: string[]
  members: { tenantIds: string[]; userIds: string[] }
  projects: { tenantIds: string[]; projectIds: string[] }
  accountUserIds: string[]
}

export async function heldCoverage(db: Db): Promise<HeldCoverage> {
  const holds = await db<{ tenant_id: string; scope_kind: HoldScopeKind; user_id: string | null; project_id: string | null }[]>`
    select tenant_id, scope_kind, user_id, project_id from legal_holds where released_at is null`
  const tenantIds = holds.filter((h) => h.scope_kind === 'tenant').map((h) => h.tenant_id)
  const members = holds.filter((h) => h.scope_kind === 'member')
  const projects = holds.filter((h) => h.scope_kind === 'project')
  const ofHeldTenants =
    tenantIds.length === 0
      ? []
      : (
          await db<{ user_id: string }[]>`
            select distinct user_id from memberships where tenant_id = any(${tenantIds}::uuid[]) and status <> 'removed'`
        ).map((r) => r.user_id)
  return {
    tenantIds: [...new Set(tenantIds)],
    members: { tenantIds: members.map((h) => h.tenant_id), userIds: members.map((h) => h.user_id!) },
    projects: { tenantIds: projects.map((h) => h.tenant_id), projectIds: projects.map((h) => h.project_id!) },
    accountUserIds: [...new Set([...members.map((h) => h.user_id!), ...ofHeldTenants])],
  }
}
