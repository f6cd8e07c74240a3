import { staleVersion } from '../platform/etag'
import { publicBase, type Config } from '../platform/config'
import { open, seal } from '../platform/keyring'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { isUuid } from '../platform/ids'
import { tenantOf, type ActingContext, type RequestContext } from '../identity/context'
import { requireRoleWithinReach } from '../identity/service'
import { changesBetween, recordAudit } from '../audit/service'
import { forgetCreatingConnection } from '../users/queries'
import type { CreateSsoConnection, UpdateSsoConnection } from './model'
import {
  deleteUserIdentity,
  findSsoConnection,
  insertSsoConnection,
  linkIdentity,
  listSsoConnections,
  listUserIdentities,
  updateSsoConnection,
  type SsoConnectionRow,
  type SsoIdentityRow,
} from './queries'

const trimIssuer = (issuer: string) => issuer.replace(/\/+$/, '')

export const toSsoConnectionDto = (config: Config) => (r: SsoConnectionRow) => ({
  id: r.id,
  tenantId: r.tenant_id,
  protocol: r.protocol,
  name: r.name,
  issuer: r.issuer,
  clientId: r.client_id,
  clientSecretSet: true as const,
  emailDomains: r.email_domains,
  defaultRole: r.default_role,
  enabled: r.enabled,
  signInUrl: `${publicBase(config)}/v1/auth/sso/${r.id}/start`,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
})

/** What the audit trail shows of a connection: every setting but the client secret. */
const auditedFields = (r: SsoConnectionRow) => ({
  name: r.name,
  issuer: r.issuer,
  clientId: r.client_id,
  emailDomains: r.email_domains,
  defaultRole: r.default_role,
  enabled: r.enabled,
})
const AUDITED_FIELDS = ['name', 'issuer', 'clientId', 'emailDomains', 'defaultRole', 'enabled'] as const

/** The default role is granted to everyone the provider signs in, so it sits under the role ceiling too. */
export async function createConnection({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, input: CreateSsoConnection) {
  requireRoleWithinReach(ctx.principal, input.defaultRole)
  const tenantId = tenantOf(ctx).tenantId
  return sql.begin(async (tx) => {
    const row = await insertSsoConnection(tx, {
      tenantId,
      name: input.name ?? new URL(input.issuer).host,
      issuer: trimIssuer(input.issuer),
      clientId: input.clientId,
      sealedSecret: seal(keys, 'secrets', input.clientSecret),
      emailDomains: [...new Set(input.emailDomains)],
      defaultRole: input.defaultRole,
      enabled: input.enabled,
    })
    await recordAudit(tx, ctx, { action: 'sso_connection.created', tenantId, target: { type: 'sso_connection', id: row.id }, details: auditedFields(row) })
    return row
  })
}

export async function listConnections({ sql: db, config, keys }: Pick<ServiceDeps, 'sql' | 'config' | 'keys'>, ctx: RequestContext, q: PageParams) {
  const { tenantId } = tenantOf(ctx)
  const binding = { route: 'GET /tenants/current/sso-connections', scope: `tenant:${tenantId}`, filters: {} }
  const p = await paginate(keys, binding, q, (after, limit) => listSsoConnections(db, tenantId, after, limit), createdCursorOf)
  return mapPage(p, toSsoConnectionDto(config))
}

const notFound = () => new ApiError('NOT_FOUND', 'No SSO connection with this id in the current tenant')

async function tenantConnection(db: Db, tenantId: string, id: string) {
  const row = isUuid(id) ? await findSsoConnection(db, id, tenantId) : undefined
  if (!row) throw notFound()
  return row
}

export async function getConnection({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  return tenantConnection(sql, tenantOf(ctx).tenantId, id)
}

/** The entry has every changed setting before and after; of the client secret only that it changed, never a value. */
export async function updateConnection(
  { sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>,
  ctx: RequestContext,
  id: string,
  expectedVersion: number | null,
  input: UpdateSsoConnection,
) {
  const { tenantId } = tenantOf(ctx)
  if (input.defaultRole !== undefined) requireRoleWithinReach(ctx.principal, input.defaultRole)
  return sql.begin(async (tx) => {
    const before = await tenantConnection(tx, tenantId, id)
    const row = await updateSsoConnection(tx, tenantId, id, expectedVersion, {
      ...input,
      issuer: input.issuer === undefined ? undefined : trimIssuer(input.issuer),
      sealedSecret: input.clientSecret === undefined ? undefined : seal(keys, 'secrets', input.clientSecret),
      emailDomains: input.emailDomains === undefined ? undefined : [...new Set(input.emailDomains)],
    })
    if (!row) throw staleVersion()
    const changes = changesBetween(auditedFields(before), auditedFields(row), AUDITED_FIELDS)
    const secretChanged = input.clientSecret !== undefined && open(keys, 'secrets', before.client_secret_sealed) !== input.clientSecret
    if (changes || secretChanged) {
      await recordAudit(tx, ctx, {
        action: 'sso_connection.updated',
        tenantId,
        target: { type: 'sso_connection', id: row.id },
        changes,
        details: secretChanged ? { clientSecretChanged: true } : null,
      })
    }
    return row
  })
}

export const toSsoIdentityDto = (r: SsoIdentityRow) => ({
  id: r.id,
  connectionId: r.connection_id,
  connectionName: r.connection_name,
  tenantId: r.tenant_id,
  subject: r.subject,
  createdAt: r.created_at.toISOString(),
})

/** The caller's own linked identities, across tenants (they are the user's, not a tenant's). */
export async function listMyIdentities({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, { principal }: RequestContext, q: PageParams) {
  const binding = { route: 'GET /users/me/sso-identities', scope: `user:${principal.userId}`, filters: {} }
  const p = await paginate(keys, binding, q, (after, limit) => listUserIdentities(sql, principal.userId, after, limit), createdCursorOf)
  return mapPage(p, toSsoIdentityDto)
}

/** Links (connection, subject) to the account at the end of an SSO sign-in or link request, recording
 *  user.sso_identity_linked in the sign-in's transaction when the link is new (a repeated sign-in links nothing).
 *  The account is the actor: the callback is anonymous until the session it starts. */
export async function linkSsoIdentity(tx: Db, ctx: ActingContext, c: Pick<SsoConnectionRow, 'id' | 'tenant_id' | 'name'>, subject: string, userId: string) {
  const identityId = await linkIdentity(tx, c.id, subject, userId)
  if (!identityId) return
  await recordAudit(tx, ctx, {
    action: 'user.sso_identity_linked',
    actorUserId: userId,
    subjectUserId: userId,
    target: { type: 'sso_identity', id: identityId },
    details: { connectionId: c.id, connectionName: c.name, tenantId: c.tenant_id },
  })
}

/** Unlinked, the identity no longer reaches the account, and its connection loses any claim by email it had as
 *  the account's creator. */
export async function unlinkMyIdentity({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string) {
  const { userId } = ctx.principal
  if (!isUuid(id)) throw identityNotFound()
  return sql.begin(async (tx) => {
    const row = await deleteUserIdentity(tx, userId, id)
    if (!row) throw identityNotFound()
    await forgetCreatingConnection(tx, userId, row.connection_id)
    await recordAudit(tx, ctx, {
      action: 'user.sso_identity_unlinked',
      target: { type: 'sso_identity', id: row.id },
      details: { connectionId: row.connection_id, connectionName: row.connection_name, tenantId: row.tenant_id },
    })
    return row
  })
}

const identityNotFound = () => new ApiError('NOT_FOUND', 'You have no linked identity with this id')
