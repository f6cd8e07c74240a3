import { staleVersion } from '../platform/etag'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { changesBetween, recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import type { Permission } from '../identity/permissions'
import { listReach, projectForNew, reachResource } from '../project-members/reach'
import type { CreateProfileInput, EmbodimentProfile, UpdateProfileInput } from './model'
import {
  deleteEmbodimentProfile,
  findEmbodimentProfile,
  insertEmbodimentProfile,
  lockEmbodimentProfile,
  listEmbodimentProfiles,
  updateEmbodimentProfile,
  type EmbodimentProfileRow,
} from './queries'

export const toEmbodimentProfile = (r: EmbodimentProfileRow): EmbodimentProfile => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  robotType: r.robot_type,
  controlRateHz: r.control_rate_hz,
  observationFeatures: r.observation_features,
  actionFeatures: r.action_features,
  version: r.version,
  projectId: r.project_id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
})

const notFound = () => new ApiError('NOT_FOUND', 'No embodiment profile with this id in the current tenant')
const nameTaken = (name: string) => new ApiError('EMBODIMENT_PROFILE_NAME_CONFLICT', `An embodiment profile named "${name}" already exists in this tenant`)
const sqlState = (err: unknown) => (err as { code?: string }).code
const IN_USE_STATES = ['23001', '23503']
const FIELDS = ['name', 'robotType', 'controlRateHz', 'observationFeatures', 'actionFeatures'] as const
const profileTarget = (r: EmbodimentProfileRow) => ({ type: 'embodiment_profile', id: r.id })

/** The profile of the caller's tenant that the caller reaches with `point` (api/project-members/reach.ts), else 404:
 *  another project's profile is as absent as another tenant's. */
async function own(db: Db, ctx: RequestContext, id: string, point: Permission, find = findEmbodimentProfile): Promise<EmbodimentProfileRow> {
  const row = isUuid(id) ? await find(db, tenantOf(ctx).tenantId, id) : undefined
  if (!row) throw notFound()
  await reachResource(db, ctx, row.project_id, point, notFound)
  return row
}

/** Unique names within a tenant: the constraint decides, so two concurrent creates cannot both win (the loser's
 *  transaction, audit entry included, rolls back). */
async function nameChecked<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if (sqlState(err) === '23505') throw nameTaken(name)
    throw err
  }
}

export async function createProfile({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, input: CreateProfileInput) {
  const { tenantId } = tenantOf(ctx)
  const projectId = await projectForNew(sql, ctx, input.projectId, 'model:write')
  const row = await nameChecked(input.name, () =>
    sql.begin(async (tx) => {
      const made = await insertEmbodimentProfile(tx, tenantId, projectId, input)
      await recordAudit(tx, ctx, {
        action: 'embodiment_profile.created',
        tenantId,
        target: profileTarget(made),
        details: { name: made.name, robotType: made.robot_type, projectId },
      })
      return made
    }),
  )
  return { profile: toEmbodimentProfile(row), version: row.version }
}

export async function getProfile({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const row = await own(sql, ctx, id, 'model:read')
  return { profile: toEmbodimentProfile(row), version: row.version }
}

export async function listProfiles({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, q: PageParams & { projectId?: string }) {
  const { tenantId } = tenantOf(ctx)
  const reach = await listReach(sql, ctx, 'model:read', q.projectId)
  const binding = { route: 'GET /embodiment-profiles', scope: `tenant:${tenantId}`, filters: { projectId: q.projectId } }
  const p = await paginate(keys, binding, q, (after, limit) => listEmbodimentProfiles(sql, tenantId, reach, after, limit), createdCursorOf)
  return mapPage(p, toEmbodimentProfile)
}

/** Fields left out keep their value. A stale If-Match answers 412 and writes nothing. Recorded with the fields that
 *  changed, before and after. */
export async function patchProfile(
  { sql }: Pick<ServiceDeps, 'sql'>,
  ctx: RequestContext,
  id: string,
  expectedVersion: number | null,
  patch: UpdateProfileInput,
) {
  const { tenantId } = tenantOf(ctx)
  return sql.begin(async (tx) => {
    const current = await own(tx, ctx, id, 'model:write', lockEmbodimentProfile)
    if (expectedVersion !== null && expectedVersion !== current.version) {
      throw staleVersion('profile')
    }
    const next = {
      name: patch.name ?? current.name,
      robotType: patch.robotType ?? current.robot_type,
      controlRateHz: patch.controlRateHz ?? current.control_rate_hz,
      observationFeatures: patch.observationFeatures ?? current.observation_features,
      actionFeatures: patch.actionFeatures ?? current.action_features,
    }
    const row = await nameChecked(next.name, () => updateEmbodimentProfile(tx, tenantId, id, next))
    const changes = changesBetween(toEmbodimentProfile(current), toEmbodimentProfile(row), FIELDS)
    if (changes) await recordAudit(tx, ctx, { action: 'embodiment_profile.updated', tenantId, target: profileTarget(row), changes })
    return { profile: toEmbodimentProfile(row), version: row.version }
  })
}

/** Packages reference their profile with ON DELETE RESTRICT: the database refuses while one does, which is
 *  the only check that cannot race with a package being created. RESTRICT raises 23001 (restrict_violation),
 *  NO ACTION 23503 (foreign_key_violation): both mean the same here. */
export async function removeProfile({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string): Promise<void> {
  const { tenantId } = tenantOf(ctx)
  const row = await own(sql, ctx, id, 'model:write')
  try {
    await sql.begin(async (tx) => {
      if (!(await deleteEmbodimentProfile(tx, tenantId, id))) throw notFound()
      await recordAudit(tx, ctx, { action: 'embodiment_profile.deleted', tenantId, target: profileTarget(row), details: { name: row.name } })
    })
  } catch (err) {
    if (IN_USE_STATES.includes(sqlState(err) ?? ''))
      throw new ApiError('EMBODIMENT_PROFILE_IN_USE', 'An edge inference package uses this embodiment profile; it cannot be deleted')
    throw err
  }
}
