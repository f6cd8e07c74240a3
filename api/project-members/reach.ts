// What a project scopes (issue 36): whether the caller reaches one piece of project-scoped work (an embodiment
// profile, a training job, a model version, an edge package), and which of them a list may show. A resource with a
// project is reachable by whoever holds the point in that project (actInProject's rules); one without is tenant-wide
// and keeps the tenant's rules (the tenant role, a PAT's scopes, a project token refused outside its project).
import type { Db } from '../platform/db'
import { ApiError } from '../platform/errors'
import { projectPermissions, tenantProjectPermissions, type Permission } from '../identity/permissions'
import { refuseOutsideProject, requirePermission } from '../identity/service'
import { tenantOf, type RequestContext } from '../identity/context'
import { liveMembershipsOf, type Reach } from './queries'
import { actInProject, requirePointIn, standingIn } from './service'

/** Reading or writing one resource whose project is `projectId` (null: tenant-wide). Out of reach is `notFound`, never
 *  a 403 that confirms it exists; a caller who may read it but not write it is told why (actInProject's 403 codes). */
export async function reachResource(db: Db, ctx: RequestContext, projectId: string | null, point: Permission, notFound: () => ApiError): Promise<void> {
  if (projectId === null) return requireTenantWide(ctx, point)
  const standing = await standingIn(db, ctx, projectId)
  if (!standing) throw notFound()
  if (standing.held.includes(point)) return
  if (point !== 'model:read' && standing.held.includes('model:read')) return requirePointIn(ctx, standing, point)
  throw notFound()
}

/** A tenant-wide resource, or a new one without a project: the tenant's rules, as the auth macro applied them before
 *  resources had projects. */
export function requireTenantWide(ctx: RequestContext, point: Permission): void {
  if (ctx.principal.project) refuseOutsideProject(ctx.principal, [point])
  requirePermission(ctx.principal, [point])
}

/** Where a list of project-scoped work looks. `filter`: the `?projectId=` asked for; a project the caller does not
 *  reach (another tenant's, an unknown one, one without the point) lists nothing, as a filter that matches nothing
 *  does. Without one, a project token lists its own project; anyone else what they reach: tenant-wide rows when the
 *  tenant role (and a PAT's scopes) give the point, and every project where they hold it. A caller who holds it
 *  nowhere is refused as before projects existed. */
export async function listReach(db: Db, ctx: RequestContext, point: Permission, filter: string | undefined): Promise<Reach> {
  const bound = ctx.principal.project
  if (filter !== undefined) {
    if (bound && bound.id !== filter) return { kind: 'none' }
    const standing = await standingIn(db, ctx, filter)
    if (!standing) return { kind: 'none' }
    if (bound && !standing.held.includes(point)) requirePointIn(ctx, standing, point)
    return standing.held.includes(point) ? { kind: 'project', projectId: filter } : { kind: 'none' }
  }
  if (bound) {
    await actInProject(db, ctx, bound.id, point)
    return { kind: 'project', projectId: bound.id }
  }
  const { tenantId, role } = tenantOf(ctx)
  const scopes = ctx.principal.grantCeiling
  const declared = scopes === null || scopes.includes(point)
  const tenantWide = declared && ctx.principal.permissions.includes(point)
  const everywhere = declared && tenantProjectPermissions(role).includes(point)
  const memberships = declared ? await liveMembershipsOf(db, tenantId, ctx.principal.userId) : []
  const holds = (m: (typeof memberships)[number]) => projectPermissions(role, { role: m.role, grant: m.grant_points, deny: m.deny_points }).includes(point)
  if (everywhere) return { kind: 'spread', tenantWide, projects: { all: true, except: memberships.filter((m) => !holds(m)).map((m) => m.project_id) } }
  const only = memberships.filter(holds).map((m) => m.project_id)
  if (!tenantWide && only.length === 0) requireTenantWide(ctx, point)
  return { kind: 'spread', tenantWide, projects: { all: false, only } }
}

const badProject = (message: string) => new ApiError('VALIDATION_ERROR', message, { errors: [{ path: 'body.projectId', message }] })

/** The project of new work: the body's `projectId` (a project of this tenant, not archived, where the caller holds the
 *  point), else a project token's own project, else none (tenant-wide, the tenant's rules). A project that is not the
 *  tenant's is 400 on body.projectId, as POST /v1/api-keys answers it: the body is what is wrong. */
export async function projectForNew(db: Db, ctx: RequestContext, projectId: string | undefined, point: Permission): Promise<string | null> {
  const chosen = projectId ?? ctx.principal.project?.id
  if (chosen === undefined) {
    requireTenantWide(ctx, point)
    return null
  }
  const standing = await standingIn(db, ctx, chosen)
  if (!standing) throw badProject('is not a project of this tenant')
  requirePointIn(ctx, standing, point)
  if (standing.project.archived) throw badProject('names an archived project: it takes no new work')
  return chosen
}

/** A parent (the profile a package is built for, the job a version is made from) must be tenant-wide or of the same
 *  project as the work made from it: work never draws on another project's. */
export function sameProjectOrTenantWide(parent: string | null, child: string | null): boolean {
  return parent === null || parent === child
}
