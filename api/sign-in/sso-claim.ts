// Which account an identity asserted by a tenant's OIDC connection may sign into (issue 12). A tenant owner can
// point a connection at a provider they run and assert any address, so the address alone proves nothing.
import type { Db } from '../platform/db'
import { ApiError, type ErrorCode } from '../platform/errors'
import { domainOfEmail } from '../platform/email'
import { domainVerifiedFor } from '../domains/service'
import type { RequestContext } from '../identity/context'
import { recordAudit } from '../audit/service'
import { findIdentityUser, type SsoConnectionRow } from '../sso/queries'
import { linkSsoIdentity } from '../sso/service'
import { findUserByEmail, insertPasswordlessUser } from '../users/queries'
import type { SignInFailure } from './service'

export interface Assertion {
  subject: string
  email: string
  /** Only an explicit `true` from the provider counts; a missing claim is unverified. */
  emailVerified: boolean
  name: string | null
}

/** A refusal of the SSO callback: the error it answers, the reason class its user.sign_in_failed entry records
 *  (written by finishSsoSignIn with the pool, after the transaction the refusal rolls back) and, when the refusal
 *  itself established it, the account it concerns. */
export class SsoRefused extends ApiError {
  constructor(
    readonly reason: SignInFailure,
    code: ErrorCode,
    message: string,
    readonly userId?: string,
  ) {
    super(code, message)
  }
}

const linkRequired = (why: string) => new SsoRefused('link_required', 'OAUTH_ACCOUNT_LINK_REQUIRED', why)

/** The account the assertion signs into (and whether it was made now), linking (connection, subject) to it the first time:
 *  - an existing link of (connection, subject) signs into its account;
 *  - a link request (`linkUserId`, from a recently authenticated session) links to that account;
 *  - an existing account by email only when this connection created it, or when the tenant has verified the
 *    email's domain and the provider says email_verified: true; never an account awaiting activation;
 *  - otherwise a new account, just in time, only for a provider-verified address. */
export async function claimAccount(
  tx: Db,
  ctx: RequestContext<null>,
  c: SsoConnectionRow,
  a: Assertion,
  linkUserId: string | null,
): Promise<{ userId: string; created: boolean }> {
  const linked = await findIdentityUser(tx, c.id, a.subject)
  if (linked) {
    if (linkUserId && linked !== linkUserId) throw linkRequired('This identity is already linked to another account')
    return { userId: linked, created: false }
  }
  const existing = await findUserByEmail(tx, a.email)
  let userId: string
  let created = false
  if (linkUserId) {
    if (existing && existing.id !== linkUserId) throw linkRequired('This address belongs to another account: sign in with that account to link it')
    userId = linkUserId
  } else if (existing) {
    if (existing.status === 'activation_required')
      throw new SsoRefused('not_active', 'OAUTH_ACCOUNT_LINK_REQUIRED', 'This account awaits activation: follow the invitation mail first')
    const createdHere = existing.created_by_sso_connection_id === c.id
    const vouched = a.emailVerified && (await domainVerifiedFor(tx, c.tenant_id, domainOfEmail(a.email)))
    if (!createdHere && !vouched) throw linkRequired('This address has an account: sign in with it, then link single sign-on from your account')
    userId = existing.id
  } else {
    if (!a.emailVerified) throw new SsoRefused('email_unverified', 'OAUTH_EXCHANGE_FAILED', 'The identity provider did not say this email address is verified')
    const id = await insertPasswordlessUser(tx, a.email, a.name, c.id)
    if (!id) throw linkRequired('This address has an account: sign in with it, then link single sign-on from your account')
    userId = id
    created = true
    await recordAudit(tx, ctx, {
      action: 'user.registered',
      actorUserId: userId,
      target: { type: 'user', id: userId },
      details: { via: 'sso', connectionId: c.id },
    })
  }
  await linkSsoIdentity(tx, ctx, c, a.subject, userId) // recorded as user.sso_identity_linked when the link is new
  return { userId, created }
}
