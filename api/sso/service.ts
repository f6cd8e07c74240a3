import { staleVersion } from '../platform/etag'
import { publicBase, type Config } from '../platform/config'
import { encryptSecret } from '../platform/crypto'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { isUuid } from '../platform/ids'
import { currentMembership, requireRoleWithinReach, type Principal } from '../identity/service'
import { forgetCreatingConnection } from '../users/queries'
import type { CreateSsoConnection, UpdateSsoConnection } from './model'
import {
  deleteUserIdentity, findSsoConnection, insertSsoConnection, listSsoConnections, listUserIdentities, updateSsoConnection, type SsoConnectionRow,
  type SsoIdentityRow,
} from './queries'

const trimIssuer = (issuer: string) => issuer.replace(/\/+$/, '')

export const toSsoConnectionDto = (config: Config) => (r: SsoConnectionRow) => ({
  id: r.id, tenantId: r.tenant_id, protocol: r.protocol, name: r.name, issuer: r.issuer, clientId: r.client_id, clientSecretSet: true as const,
  emailDomains: r.email_domains, defaultRole: r.default_role, enabled: r.enabled, signInUrl: `${publicBase(config)}/v1/auth/sso/${r.id}/start`,
  createdAt: r.created_at.toISOString(), updatedAt: r.updated_at.toISOString(),
})

/** The default role is granted to everyone the provider signs in, so it sits under the role ceiling too. */
export async function createConnection({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, principal: Principal, input: CreateSsoConnection) {
  requireRoleWithinReach(principal, input.defaultRole)
  return insertSsoConnection(sql, {
    tenantId: currentMembership(principal).tenantId, name: input.name ?? new URL(input.issuer).host, issuer: trimIssuer(input.issuer),
    clientId: input.clientId, sealedSecret: encryptSecret(keys.secrets, input.clientSecret), emailDomains: [...new Set(input.emailDomains)],
    defaultRole: input.defaultRole, enabled: input.enabled,
  })
}

export async function listConnections({ sql: db, config, keys }: Pick<ServiceDeps, 'sql' | 'config' | 'keys'>, principal: Principal, q: PageParams) {
  const pageKey = keys.page
  const { tenantId } = currentMembership(principal)
  const binding = { route: 'GET /tenants/current/sso-connections', scope: `tenant:${tenantId}`, filters: {} }
  const p = await paginate(pageKey, binding, q, (after, limit) => listSsoConnections(db, tenantId, after, limit), createdCursorOf)
  return mapPage(p, toSsoConnectionDto(config))
}

const notFound = () => new ApiError('NOT_FOUND', 'No SSO connection with this id in the current tenant')

export async function getConnection({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string) {
  const row = isUuid(id) ? await findSsoConnection(sql, id, currentMembership(principal).tenantId) : undefined
  if (!row) throw notFound()
  return row
}

export async function updateConnection(deps: Pick<ServiceDeps, 'sql' | 'keys'>, principal: Principal, id: string, expectedVersion: number | null, input: UpdateSsoConnection) {
  const { tenantId } = currentMembership(principal)
  if (input.defaultRole !== undefined) requireRoleWithinReach(principal, input.defaultRole)
  await getConnection(deps, principal, id)
  const row = await updateSsoConnection(deps.sql, tenantId, id, expectedVersion, {
    ...input, issuer: input.issuer === undefined ? undefined : trimIssuer(input.issuer),
    sealedSecret: input.clientSecret === undefined ? undefined : encryptSecret(deps.keys.secrets, input.clientSecret),
    emailDomains: input.emailDomains === undefined ? undefined : [...new Set(input.emailDomains)],
  })
  if (!row) throw staleVersion()
  return row
}

export const toSsoIdentityDto = (r: SsoIdentityRow) => ({
  id: r.id, connectionId: r.connection_id, connectionName: r.connection_name, tenantId: r.tenant_id, subject: r.subject, createdAt: r.created_at.toISOString(),
})

/** The caller's own linked identities, across tenants (they are the user's, not a tenant's). */
export async function listMyIdentities({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, principal: Principal, q: PageParams) {
  const binding = { route: 'GET /users/me/sso-identities', scope: `user:${principal.userId}`, filters: {} }
  const p = await paginate(keys.page, binding, q, (after, limit) => listUserIdentities(sql, principal.userId, after, limit), createdCursorOf)
  return mapPage(p, toSsoIdentityDto)
}

/** Unlinked, the identity no longer reaches the account, and its connection loses any claim by email it had as
 *  the account's creator. */
export async function unlinkMyIdentity({ sql }: Pick<ServiceDeps, 'sql'>, principal: Principal, id: string) {
  if (!isUuid(id)) throw identityNotFound()
  return sql.begin(async (tx) => {
    const row = await deleteUserIdentity(tx, principal.userId, id)
    if (!row) throw identityNotFound()
    await forgetCreatingConnection(tx, principal.userId, row.connection_id)
    return row
  })
}

const identityNotFound = () => new ApiError('NOT_FOUND', 'You have no linked identity with this id')
