import { staleVersion } from '../platform/etag'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { changesBetween, recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import {
  PERMISSION_CATALOGUE,
  PROJECT_ROLE_PERMISSIONS,
  projectPermissions,
  tenantProjectPermissions,
  unmetRequires,
  type Permission,
  type ProjectGrant,
  type Role,
} from '../identity/permissions'
import { findMember, findMembershipOf } from '../memberships/queries'
import { findProject, type ProjectRow } from '../projects/queries'
import { dispatchNoticeMail, notify } from '../notifications/service'
import type { AddProjectMemberInput, ProjectMember, UpdateProjectMemberInput } from './model'
import {
  deleteProjectMember,
  findProjectMember,
  insertProjectMember,
  listProjectMembers,
  lockProjectMember,
  updateProjectMember,
  type ProjectMemberFields,
  type ProjectMemberRow,
} from './queries'

type Deps = Pick<ServiceDeps, 'sql'>

const live = (r: Pick<ProjectMemberRow, 'expires_at'>, now = Date.now()) => r.expires_at === null || r.expires_at.getTime() > now
const grantOf = (r: ProjectMemberRow): ProjectGrant => ({ role: r.role, grant: r.grant_points, deny: r.deny_points })

export const toProjectMember = (r: ProjectMemberRow): ProjectMember => {
  const expired = !live(r)
  return {
    id: r.id,
    projectId: r.project_id,
    userId: r.user_id,
    membershipId: r.membership_id,
    email: r.email,
    tenantRole: r.tenant_role,
    role: r.role,
    overlay: { grant: r.grant_points, deny: r.deny_points },
    effectivePermissions: projectPermissions(r.tenant_role, expired ? null : grantOf(r)),
    expiresAt: r.expires_at?.toISOString() ?? null,
    expired,
    grantedBy: r.granted_by,
    version: r.version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }
}

const projectNotFound = () => new ApiError('NOT_FOUND', 'No project with this id in the current tenant')
const memberNotFound = () => new ApiError('NOT_FOUND', 'This user is not a member of the project')

/** What the caller may do in one project, read fresh on every call (never from a cache): the project of the tenant,
 *  and the points held there by (tenant role's project points ∪ project role's ∪ grant) − deny, cut to a PAT's
 *  scopes. Refuses a point not held: PROJECT_MEMBERSHIP_EXPIRED when the caller's project membership has expired,
 *  PERMISSION_NOT_DECLARED when only the token's scopes lack it, PERMISSION_DENIED otherwise. */
export async function actInProject(db: Db, ctx: RequestContext, projectId: string, point: Permission): Promise<{ project: ProjectRow; held: Permission[] }> {
  const standing = await standingIn(db, ctx, projectId)
  if (!standing) throw projectNotFound()
  requirePointIn(ctx, standing, point)
  return { project: standing.project, held: standing.held }
}

/** actInProject's refusal, for a caller that has already read its standing in the project (no second read). */
export function requirePointIn(ctx: RequestContext, standing: ProjectStanding, point: Permission): void {
  const { project, held, byRole, expired } = standing
  if (held.includes(point)) return
  if (!byRole.includes(point)) {
    if (expired) throw new ApiError('PROJECT_MEMBERSHIP_EXPIRED', `Your membership in this project expired at ${expired.toISOString()}`)
    throw new ApiError('PERMISSION_DENIED', `This operation requires ${point} in this project`)
  }
  const bound = ctx.principal.project
  if (bound && bound.id !== project.id) throw new ApiError('PERMISSION_NOT_DECLARED', `This token acts only inside project ${bound.id}`)
  throw new ApiError('PERMISSION_NOT_DECLARED', `This token's scopes do not declare ${point}, which this operation needs`)
}

export type ProjectStanding = NonNullable<Awaited<ReturnType<typeof standingIn>>>

/** The caller's standing in one project of its tenant (undefined: no such project): what its roles give there
 *  (`byRole`), what it holds (`held`: cut to a PAT's scopes, empty for a token bound to another project), and when
 *  its project membership expired, if it has. Read fresh, never from a cache. */
export async function standingIn(db: Db, ctx: RequestContext, projectId: string) {
  const { tenantId, role } = tenantOf(ctx)
  if (!isUuid(projectId)) return undefined
  // Both reads at once: a project route, and every list of project work, waits for them.
  const [project, mine] = await Promise.all([findProject(db, tenantId, projectId), findProjectMember(db, tenantId, projectId, ctx.principal.userId)])
  if (!project) return undefined
  const expired = mine !== undefined && !live(mine) ? mine.expires_at : null
  const byRole = projectPermissions(role, mine && !expired ? grantOf(mine) : null)
  const scopes = ctx.principal.grantCeiling
  const bound = ctx.principal.project
  const held = bound && bound.id !== project.id ? [] : scopes === null ? byRole : byRole.filter((p) => scopes.includes(p))
  return { project, byRole, held, expired }
}

const overlayRefused = (message: string) => new ApiError('INVALID_PERMISSION_OVERLAY', message)
const roleRefused = (message: string) => new ApiError('INVALID_ROLE_TRANSITION', message)

/** The rules a project membership must keep, against what the granting caller holds in the project (`held`). */
function checkGrant(held: readonly Permission[], tenantRole: Role, g: ProjectGrant): void {
  const tenantWide = [...g.grant, ...g.deny].filter((p) => PERMISSION_CATALOGUE[p].scope !== 'project')
  if (tenantWide.length > 0) throw overlayRefused(`Tenant-scope points cannot be granted or denied in a project: ${[...new Set(tenantWide)].join(', ')}`)
  const both = g.grant.filter((p) => g.deny.includes(p))
  if (both.length > 0) throw overlayRefused(`Points both granted and denied: ${[...new Set(both)].join(', ')}`)
  const roleBeyond = PROJECT_ROLE_PERMISSIONS[g.role].filter((p) => !held.includes(p))
  if (roleBeyond.length > 0) throw roleRefused(`The ${g.role} role carries points you do not hold in this project: ${roleBeyond.join(', ')}`)
  const grantBeyond = g.grant.filter((p) => !held.includes(p))
  if (grantBeyond.length > 0) throw overlayRefused(`You cannot grant points you do not hold in this project: ${[...new Set(grantBeyond)].join(', ')}`)
  // GitLab's rule: a project role never below what the tenant role already gives in every project.
  const inherited = tenantProjectPermissions(tenantRole)
  const roleGives = PROJECT_ROLE_PERMISSIONS[g.role]
  if (roleGives.every((p) => inherited.includes(p)) && roleGives.length < inherited.length) {
    throw roleRefused(`The ${g.role} role is below what the member's tenant role (${tenantRole}) already gives in every project`)
  }
  const unmet = unmetRequires(projectPermissions(tenantRole, g))
  if (unmet.length > 0) {
    throw overlayRefused(`The overlay leaves requirements unmet: ${unmet.map((u) => `${u.point} requires ${u.lacks.join(', ')}`).join('; ')}`)
  }
}

/** Changing or removing a membership takes away what it gives: only someone who holds all of it may. */
function checkWithinReach(held: readonly Permission[], current: ProjectMemberRow): void {
  const gives = [...PROJECT_ROLE_PERMISSIONS[current.role], ...current.grant_points].filter((p) => !held.includes(p))
  if (gives.length > 0) throw roleRefused(`This membership gives points you do not hold in this project: ${[...new Set(gives)].join(', ')}`)
}

function futureExpiry(expiresAt: string | null | undefined): Date | null {
  if (expiresAt === undefined || expiresAt === null) return null
  const at = new Date(expiresAt)
  if (at.getTime() <= Date.now()) {
    throw new ApiError('VALIDATION_ERROR', 'expiresAt must be in the future', { errors: [{ path: 'body.expiresAt', message: 'must be in the future' }] })
  }
  return at
}

const dedupe = <T>(xs: readonly T[]): T[] => [...new Set(xs)]
const auditView = (m: ProjectMember) => ({ role: m.role, overlay: m.overlay, expiresAt: m.expiresAt })

export async function listMembersOfProject({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, projectId: string, q: PageParams) {
  const { project } = await actInProject(sql, ctx, projectId, 'model:read')
  const binding = { route: 'GET /projects/{projectId}/members', scope: `project:${project.id}`, filters: {} }
  const p = await paginate(keys, binding, q, (after, limit) => listProjectMembers(sql, project.tenant_id, project.id, after, limit), createdCursorOf)
  return mapPage(p, toProjectMember)
}

/** Adds the member and tells them, in the add's transaction (the mail, if they want it, after the commit). */
export async function addProjectMember(deps: Pick<ServiceDeps, 'sql' | 'keys' | 'mail'>, ctx: RequestContext, projectId: string, input: AddProjectMemberInput) {
  const { sql, keys } = deps
  const { project, held } = await actInProject(sql, ctx, projectId, 'project:manage')
  const tenantId = project.tenant_id
  const membership = await findMembershipOf(sql, tenantId, input.userId)
  const tenantMember = membership ? await findMember(sql, tenantId, membership.id) : undefined
  if (!tenantMember) throw new ApiError('SUBJECT_NOT_IN_TENANT', 'The user is not a member of this tenant')
  const fields: ProjectMemberFields = {
    role: input.role,
    grant: dedupe(input.overlay?.grant ?? []),
    deny: dedupe(input.overlay?.deny ?? []),
    expiresAt: futureExpiry(input.expiresAt),
    grantedBy: ctx.principal.userId,
  }
  checkGrant(held, tenantMember.role, fields)
  const added = await sql.begin(async (tx) => {
    const id = await insertProjectMember(tx, { tenantId, projectId: project.id, membershipId: tenantMember.id, userId: input.userId, ...fields })
    if (!id) throw new ApiError('USER_ALREADY_MEMBER', 'The user is already a member of this project: change the membership with PATCH')
    const member = toProjectMember((await findProjectMember(tx, tenantId, project.id, input.userId))!)
    await recordAudit(tx, ctx, {
      action: 'project_member.added',
      tenantId,
      subjectUserId: input.userId,
      target: { type: 'project', id: project.id },
      details: auditView(member),
    })
    const note = await notify(tx, keys, {
      userId: input.userId,
      tenantId,
      kind: 'project.membership_added',
      fields: { projectId: project.id, projectName: project.name, role: member.role, expiresAt: member.expiresAt, grantedBy: fields.grantedBy },
      dedupeKey: `project_member_added:${id}`,
    })
    return { member, note }
  })
  await dispatchNoticeMail(deps, ctx, [added.note])
  return added.member
}

export async function getProjectMember({ sql }: Deps, ctx: RequestContext, projectId: string, userId: string) {
  const { project } = await actInProject(sql, ctx, projectId, 'model:read')
  const row = isUuid(userId) ? await findProjectMember(sql, project.tenant_id, project.id, userId) : undefined
  if (!row) throw memberNotFound()
  return toProjectMember(row)
}

/** Fields left out keep their value; an overlay replaces the old one whole. A stale If-Match is 412. */
export async function patchProjectMember(
  { sql }: Deps,
  ctx: RequestContext,
  projectId: string,
  userId: string,
  expectedVersion: number | null,
  patch: UpdateProjectMemberInput,
) {
  const { project, held } = await actInProject(sql, ctx, projectId, 'project:manage')
  const tenantId = project.tenant_id
  return sql.begin(async (tx) => {
    const current = isUuid(userId) ? await lockProjectMember(tx, tenantId, project.id, userId) : undefined
    if (!current) throw memberNotFound()
    if (expectedVersion !== null && expectedVersion !== current.version) throw staleVersion('project member')
    checkWithinReach(held, current)
    const fields: ProjectMemberFields = {
      role: patch.role ?? current.role,
      grant: patch.overlay ? dedupe(patch.overlay.grant) : current.grant_points,
      deny: patch.overlay ? dedupe(patch.overlay.deny) : current.deny_points,
      expiresAt: patch.expiresAt === undefined ? current.expires_at : futureExpiry(patch.expiresAt),
      grantedBy: ctx.principal.userId,
    }
    checkGrant(held, current.tenant_role, fields)
    await updateProjectMember(tx, current.id, fields)
    const before = toProjectMember(current)
    const after = toProjectMember((await findProjectMember(tx, tenantId, project.id, userId))!)
    const changes = changesBetween(auditView(before), auditView(after), ['role', 'overlay', 'expiresAt'] as const)
    if (changes) {
      await recordAudit(tx, ctx, { action: 'project_member.updated', tenantId, subjectUserId: userId, target: { type: 'project', id: project.id }, changes })
    }
    return after
  })
}

export async function removeProjectMember({ sql }: Deps, ctx: RequestContext, projectId: string, userId: string, expectedVersion: number | null) {
  const { project, held } = await actInProject(sql, ctx, projectId, 'project:manage')
  const tenantId = project.tenant_id
  return sql.begin(async (tx) => {
    const current = isUuid(userId) ? await lockProjectMember(tx, tenantId, project.id, userId) : undefined
    if (!current) throw memberNotFound()
    if (expectedVersion !== null && expectedVersion !== current.version) throw staleVersion('project member')
    checkWithinReach(held, current)
    await deleteProjectMember(tx, current.id)
    const member = toProjectMember(current)
    await recordAudit(tx, ctx, {
      action: 'project_member.removed',
      tenantId,
      subjectUserId: userId,
      target: { type: 'project', id: project.id },
      details: auditView(member),
    })
    return member
  })
}
