import { staleVersion } from '../platform/etag'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { changesBetween, recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import type { CreateProjectInput, Project, UpdateProjectInput } from './model'
import { archiveProject, findProject, insertProject, listProjects, lockProject, updateProject, type ProjectRow } from './queries'

export const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  slug: r.slug,
  description: r.description,
  createdBy: r.created_by,
  archived: r.archived,
  archivedAt: r.archived_at?.toISOString() ?? null,
  version: r.version,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
})

const notFound = () => new ApiError('NOT_FOUND', 'No project with this id in the current tenant')
// A slug is unique within the tenant (the database constraint decides, so two concurrent writers cannot both win).
const slugTaken = (slug: string) => new ApiError('PROJECT_SLUG_CONFLICT', `A project with the slug "${slug}" already exists in this tenant`)
const sqlState = (err: unknown) => (err as { code?: string }).code
const FIELDS = ['name', 'slug', 'description'] as const
const projectTarget = (r: ProjectRow) => ({ type: 'project', id: r.id })

async function own(db: Db, tenantId: string, id: string, find = findProject): Promise<ProjectRow> {
  const row = isUuid(id) ? await find(db, tenantId, id) : undefined
  if (!row) throw notFound()
  return row
}

/** The unique constraint decides, so two concurrent writers of one slug cannot both win (the loser's transaction,
 *  audit entry included, rolls back). */
async function slugChecked<T>(slug: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if (sqlState(err) === '23505') throw slugTaken(slug)
    throw err
  }
}

export async function createProject({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, input: CreateProjectInput) {
  const { tenantId } = tenantOf(ctx)
  const fields = { name: input.name, slug: input.slug, description: input.description ?? null }
  const row = await slugChecked(input.slug, () =>
    sql.begin(async (tx) => {
      const made = await insertProject(tx, tenantId, ctx.principal.userId, fields)
      await recordAudit(tx, ctx, { action: 'project.created', tenantId, target: projectTarget(made), details: { name: made.name, slug: made.slug } })
      return made
    }),
  )
  return { project: toProject(row), version: row.version }
}

export async function getProject({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const row = await own(sql, tenantOf(ctx).tenantId, id)
  return { project: toProject(row), version: row.version }
}

export async function listTenantProjects(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { archived?: 'true' | 'false' },
) {
  const { tenantId } = tenantOf(ctx)
  const archived = q.archived === undefined ? null : q.archived === 'true'
  const binding = { route: 'GET /projects', scope: `tenant:${tenantId}`, filters: { archived: q.archived } }
  const p = await paginate(keys, binding, q, (after, limit) => listProjects(sql, tenantId, archived, after, limit), createdCursorOf)
  return mapPage(p, toProject)
}

/** Fields left out keep their value. A stale If-Match answers 412 and writes nothing. Recorded with the fields that
 *  changed, before and after. */
export async function patchProject(
  { sql }: Pick<ServiceDeps, 'sql'>,
  ctx: RequestContext,
  id: string,
  expectedVersion: number | null,
  patch: UpdateProjectInput,
) {
  const { tenantId } = tenantOf(ctx)
  return sql.begin(async (tx) => {
    const current = await own(tx, tenantId, id, lockProject)
    if (expectedVersion !== null && expectedVersion !== current.version) throw staleVersion('project')
    const next = {
      name: patch.name ?? current.name,
      slug: patch.slug ?? current.slug,
      description: patch.description === undefined ? current.description : patch.description,
    }
    const row = await slugChecked(next.slug, () => updateProject(tx, tenantId, id, next))
    const changes = changesBetween(toProject(current), toProject(row), FIELDS)
    if (changes) await recordAudit(tx, ctx, { action: 'project.updated', tenantId, target: projectTarget(row), changes })
    return { project: toProject(row), version: row.version }
  })
}

/** Soft: the project stays, marked archived. Archiving an archived project changes nothing and records nothing, so a
 *  retried DELETE answers what the first one did. */
export async function archiveTenantProject({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  return sql.begin(async (tx) => {
    const current = await own(tx, tenantId, id, lockProject)
    if (current.archived) return { project: toProject(current), version: current.version }
    const row = await archiveProject(tx, tenantId, id)
    await recordAudit(tx, ctx, { action: 'project.archived', tenantId, target: projectTarget(row), details: { name: row.name, slug: row.slug } })
    return { project: toProject(row), version: row.version }
  })
}
