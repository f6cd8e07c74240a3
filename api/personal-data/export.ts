import type { ServiceDeps } from '../platform/deps'
import type { RequestContext } from '../identity/context'
import { toApiKeySummary } from '../api-keys/service'
import { listUserApiKeys } from '../api-keys/queries'
import { listActorAudit, sealActorAudit } from '../audit/queries'
import { toAuditEntry } from '../audit/service'
import { listUserMemberships } from '../memberships/queries'
import { listWebAuthnCredentials, mfaSummaryOf } from '../mfa/queries'
import { toCredentialDto } from '../mfa/service'
import { listLiveSessions } from '../sessions/queries'
import { listUserIdentities } from '../sso/queries'
import { toSsoIdentityDto } from '../sso/service'
import { findUserById } from '../users/queries'
import { toUserDto } from '../users/service'
import { EXPORT_AUDIT_ENTRIES_MAX, EXPORT_LIST_MAX } from './model'

/** GET /users/me/export (GDPR Art. 20): the person's own data, as JSON, in one answer. Secrets never: no session
 *  token, no PAT or its hash, no TOTP secret, no recovery code, no passkey public key. The reads run in one
 *  repeatable-read transaction, so the parts agree with each other. */
export async function exportPersonalData({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext) {
  const userId = ctx.principal.userId
  await sealActorAudit(sql, userId)
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const user = (await findUserById(tx, userId))!
    const memberships = await listUserMemberships(tx, userId)
    const sessions = await listLiveSessions(tx, userId, null, EXPORT_LIST_MAX)
    const tokens = await listUserApiKeys(tx, userId)
    const mfa = await mfaSummaryOf(tx, userId)
    const passkeys = await listWebAuthnCredentials(tx, userId, null, EXPORT_LIST_MAX)
    const identities = await listUserIdentities(tx, userId, null, EXPORT_LIST_MAX)
    const audit = await listActorAudit(tx, userId, EXPORT_AUDIT_ENTRIES_MAX + 1)
    return {
      exportedAt: new Date().toISOString(),
      profile: toUserDto(user),
      memberships: memberships.map((m) => ({
        id: m.id,
        tenantId: m.tenant_id,
        tenantName: m.tenant_name,
        tenantSlug: m.tenant_slug,
        role: m.role,
        status: m.status,
      })),
      sessions: sessions.map((s) => ({
        id: s.id,
        current: s.id === ctx.principal.credentialId,
        userAgent: s.user_agent,
        ip: s.ip,
        createdAt: s.created_at.toISOString(),
        lastSeenAt: s.last_seen_at.toISOString(),
        expiresAt: s.expires_at.toISOString(),
      })),
      tokens: tokens.map(toApiKeySummary),
      secondFactors: {
        totp: mfa.totp_status ? { status: mfa.totp_status, activatedAt: mfa.totp_activated_at?.toISOString() ?? null } : null,
        recoveryCodesLeft: mfa.recovery_codes_left,
        passkeys: passkeys.map(toCredentialDto),
      },
      ssoIdentities: identities.map(toSsoIdentityDto),
      auditEntries: audit.slice(0, EXPORT_AUDIT_ENTRIES_MAX).map(toAuditEntry),
      auditEntriesTruncated: audit.length > EXPORT_AUDIT_ENTRIES_MAX,
    }
  })
}
