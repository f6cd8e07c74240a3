import { staleVersion } from '../platform/etag'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { currentMembership, type Principal } from '../identity/service'
import type { CreateProfileInput, EmbodimentProfile, UpdateProfileInput } from './model'
import {
  deleteEmbodimentProfile, findEmbodimentProfile, insertEmbodimentProfile, lockEmbodimentProfile, listEmbodimentProfiles, updateEmbodimentProfile,
  type EmbodimentProfileRow,
} from './queries'

export const toEmbodimentProfile = (r: EmbodimentProfileRow): EmbodimentProfile => ({
  id: r.id, tenantId: r.tenant_id, name: r.name, robotType: r.robot_type, controlRateHz: r.control_rate_hz,
  observationFeatures: r.observation_features, actionFeatures: r.action_features, version: r.version,
  createdAt: r.created_at.toISOString(), updatedAt: r.updated_at.toISOString(),
})

const notFound = () => new ApiError('NOT_FOUND', 'No embodiment profile with this id in the current tenant')
const nameTaken = (name: string) => new ApiError('EMBODIMENT_PROFILE_NAME_CONFLICT', `An embodiment profile named "${name}" already exists in this tenant`)
const sqlState = (err: unknown) => (err as { code?: string }).code
const IN_USE_STATES = ['23001', '23503']

async function own(db: Db, tenantId: string, id: string, find = findEmbodimentProfile): Promise<EmbodimentProfileRow> {
  const row = isUuid(id) ? await find(db, tenantId, id) : undefined
  if (!row) throw notFound()
  return row
}

/** Unique names within a tenant: the constraint decides, so two concurrent creates cannot both win. */
async function nameChecked<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if (sqlState(err) === '23505') throw nameTaken(name)
    throw err
  }
}

export async function createProfile({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, input: CreateProfileInput) {
  const { tenantId } = currentMembership(principal)
  const row = await nameChecked(input.name, () => insertEmbodimentProfile(sql, tenantId, input))
  return { profile: toEmbodimentProfile(row), version: row.version }
}

export async function getProfile({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string) {
  const row = await own(sql, currentMembership(principal).tenantId, id)
  return { profile: toEmbodimentProfile(row), version: row.version }
}

export async function listProfiles({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, principal: Principal, q: PageParams) {
  const { tenantId } = currentMembership(principal)
  const binding = { route: 'GET /embodiment-profiles', scope: `tenant:${tenantId}`, filters: {} }
  const p = await paginate(keys.page, binding, q, (after, limit) => listEmbodimentProfiles(sql, tenantId, after, limit), createdCursorOf)
  return mapPage(p, toEmbodimentProfile)
}

/** Fields left out keep their value. A stale If-Match answers 412 and writes nothing. */
export async function patchProfile({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string, expectedVersion: number | null, patch: UpdateProfileInput) {
  const { tenantId } = currentMembership(principal)
  return sql.begin(async (tx) => {
    const current = await own(tx, tenantId, id, lockEmbodimentProfile)
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
    return { profile: toEmbodimentProfile(row), version: row.version }
  })
}

/** Packages reference their profile with ON DELETE RESTRICT: the database refuses while one does, which is
 *  the only check that cannot race with a package being created. RESTRICT raises 23001 (restrict_violation),
 *  NO ACTION 23503 (foreign_key_violation): both mean the same here. */
export async function removeProfile({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string): Promise<void> {
  const { tenantId } = currentMembership(principal)
  await own(sql, tenantId, id)
  try {
    if (!(await deleteEmbodimentProfile(sql, tenantId, id))) throw notFound()
  } catch (err) {
    if (IN_USE_STATES.includes(sqlState(err) ?? '')) throw new ApiError('EMBODIMENT_PROFILE_IN_USE', 'An edge inference package uses this embodiment profile; it cannot be deleted')
    throw err
  }
}
