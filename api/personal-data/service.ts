import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { logIds, type RequestContext } from '../identity/context'
import { erasePersonalParts } from '../audit/queries'
import { recordAudit } from '../audit/service'
import { deleteUserApiKeys, revokeUserApiKeys } from '../api-keys/queries'
import { retireCredentials } from '../credentials/queries'
import { activeHoldsOnUser } from '../legal-holds/queries'
import { enqueueMail } from '../mail/service'
import { countOtherLastingOwners, listUserMemberships, lockTenantMemberships, removeUserMemberships } from '../memberships/queries'
import { eraseSecondFactors } from '../mfa/queries'
import { deleteUserResets } from '../password-resets/queries'
import { deleteUserSessions, revokeOtherSessions } from '../sessions/queries'
import { deleteUserIdentities } from '../sso/queries'
import { deletePasswordHistory, holdErasedAddress, lockUser, pseudonymiseUser } from '../users/queries'
import { ERASED_ADDRESS_HOLD_DAYS, ERASURE_REAUTHENTICATION_SECONDS } from './model'

const DAY_MS = 86_400_000

/** The pseudonym an erased account is shown by from then on: stable for the account, and telling nothing of it. */
export const pseudonymOf = (userId: string) => `erased-${userId.replaceAll('-', '')}@erased.invalid`

/** Erasing an account cannot be undone, so it asks what GitHub's sudo mode asks: a session (never a PAT, which may be
 *  a copied secret) that signed in or answered its second factor within the last five minutes. */
function requireRecentAuthentication(ctx: RequestContext): void {
  const { principal: p } = ctx
  if (p.credential !== 'session' || !p.authentication) {
    throw new ApiError('FORBIDDEN', 'An account is erased from a signed-in session, not with a personal access token')
  }
  if (Date.now() - p.authentication.authenticatedAt.getTime() > ERASURE_REAUTHENTICATION_SECONDS * 1000) {
    throw new ApiError(
      'FORBIDDEN',
      `Sign in again (or answer your second factor) within ${ERASURE_REAUTHENTICATION_SECONDS / 60} minutes before erasing your account`,
    )
  }
}

/** DELETE /users/me. In one transaction: refused for the last owner of a tenant (naming the tenants) and for a person
 *  under a legal hold (naming neither the tenant nor the matter: the hold is confidential); otherwise every session
 *  ends, every token is revoked, every membership is removed (an entry in each tenant's trail), the second factors,
 *  linked identities, reset grants and password history are deleted, and the row keeps only its id, a pseudonym and
 *  the erasure's time. The account's own entry records the pseudonym as its actor label, and the confirmation goes
 *  to the old address through the mail outbox. */
export async function eraseAccount(deps: Pick<ServiceDeps, 'sql' | 'keys' | 'mail'>, ctx: RequestContext) {
  requireRecentAuthentication(ctx)
  const userId = ctx.principal.userId
  const pseudonym = pseudonymOf(userId)
  const { result, mail } = await deps.sql.begin(async (tx) => {
    const user = (await lockUser(tx, userId))!
    const memberships = await listUserMemberships(tx, userId)
    const owned = memberships.filter((m) => m.role === 'owner' && m.status === 'active')
    const alone = []
    for (const m of owned) {
      // The tenant's row lock orders this against a co-owner leaving at the same moment (memberships/service.ts).
      await lockTenantMemberships(tx, m.tenant_id)
      if ((await countOtherLastingOwners(tx, m.tenant_id, m.id)) === 0) alone.push(m)
    }
    if (alone.length > 0) {
      throw new ApiError(
        'LAST_OWNER_PROTECTION',
        `You are the only owner of ${alone.map((m) => `"${m.tenant_name}" (${m.tenant_id})`).join(', ')}: make another member an owner first`,
        {
          errors: alone.map((m) => ({ path: `tenants.${m.tenant_id}`, message: `the only owner of ${m.tenant_name}` })),
        },
      )
    }
    if ((await activeHoldsOnUser(tx, userId)).length > 0) {
      throw new ApiError('LEGAL_HOLD_ACTIVE', 'This account is under a legal hold and cannot be erased now')
    }

    const sessionsEnded = await revokeOtherSessions(tx, userId, null)
    const tokensRevoked = await revokeUserApiKeys(tx, userId)
    // Then the rows go (a session's address and user agent, a token's name are the person's); only their digests stay,
    // linked to no one, so a token presented later answers TOKEN_NOT_FOUND until it would have expired.
    await retireCredentials(tx, 'account_erased', [...(await deleteUserSessions(tx, userId)), ...(await deleteUserApiKeys(tx, userId))])
    const removed = await removeUserMemberships(tx, userId)
    const factors = await eraseSecondFactors(tx, userId)
    const identities = await deleteUserIdentities(tx, userId)
    await deleteUserResets(tx, userId)
    await deletePasswordHistory(tx, userId)
    await holdErasedAddress(tx, user.email, ERASED_ADDRESS_HOLD_DAYS)
    const erased = await pseudonymiseUser(tx, userId, pseudonym)

    // The entries they acted in, are the subject of or are named in lose their personal part (label, address, user
    // agent, an address in details, a display name in changes); the chain
    // keeps its digest and still verifies (migrations/0091). Entries sealed before that form keep theirs.
    await erasePersonalParts(tx, { userId, email: user.email })
    // From here on the account's entries carry the pseudonym, never the address the session's label holds.
    const asPseudonym: RequestContext = { ...ctx, principal: { ...ctx.principal, label: pseudonym } }
    for (const m of removed) {
      await recordAudit(tx, asPseudonym, {
        action: 'membership.removed',
        tenantId: m.tenant_id,
        subjectUserId: userId,
        target: { type: 'membership', id: m.id },
        details: { reason: 'account_erased' },
      })
    }
    await recordAudit(tx, asPseudonym, {
      action: 'user.erased',
      target: { type: 'user', id: userId },
      details: { sessionsEnded, tokensRevoked, membershipsRemoved: removed.length, ...factors, ssoIdentities: identities },
    })
    const mail = await enqueueMail(tx, { to: user.email, template: 'accountErased', data: { days: ERASED_ADDRESS_HOLD_DAYS } }, deps.keys)
    const erasedAt = erased.erased_at ?? new Date()
    return {
      mail,
      result: {
        userId,
        erasedAt: erasedAt.toISOString(),
        sessionsEnded,
        tokensRevoked,
        membershipsRemoved: removed.length,
        addressReusableAt: new Date(erasedAt.getTime() + ERASED_ADDRESS_HOLD_DAYS * DAY_MS).toISOString(),
      },
    }
  })
  await deps.mail.dispatch([mail], logIds(ctx))
  return result
}
