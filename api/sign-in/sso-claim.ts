// Which account an identity asserted by a tenant's OIDC connection may sign into (issue 12). A tenant owner can
// point a connection at a provider they run and assert any address, so the address alone proves nothing.
import type { Db } from '../platform/db'
import { ApiError } from '../platform/errors'
import { domainOfEmail } from '../platform/email'
import { domainVerifiedFor } from '../domains/service'
import type { RequestContext } from '../identity/context'
import { findIdentityUser, type SsoConnectionRow } from '../sso/queries'
import { linkSsoIdentity } from '../sso/service'
import { findUserByEmail, insertPasswordlessUser } from '../users/queries'

export interface Assertion {
  subject: string
  email: string
  /** Only an explicit `true` from the provider counts; a missing claim is unverified. */
  emailVerified: boolean
  name: string | null
}

const linkRequired = (why: string) => new ApiError('OAUTH_ACCOUNT_LINK_REQUIRED', why)

/** The account the assertion signs into, linking (connection, subject) to it the first time:
 *  - an existing link of (connection, subject) signs into its account;
 *  - a link request (`linkUserId`, from a recently authenticated session) links to that account;
 *  - an existing account by email only when this connection created it, or when the tenant has verified the
 *    email's domain and the provider says email_verified: true; never an account awaiting activation;
 *  - otherwise a new account, just in time, only for a provider-verified address. */
export async function claimAccount(tx: Db, ctx: RequestContext<null>, c: SsoConnectionRow, a: Assertion, linkUserId: string | null): Promise<string> {
  const linked = await findIdentityUser(tx, c.id, a.subject)
  if (linked) {
    if (linkUserId && linked !== linkUserId) throw linkRequired('This identity is already linked to another account')
    return linked
  }
  const existing = await findUserByEmail(tx, a.email)
  let userId: string
  if (linkUserId) {
    if (existing && existing.id !== linkUserId) throw linkRequired('This address belongs to another account: sign in with that account to link it')
    userId = linkUserId
  } else if (existing) {
    if (existing.status === 'activation_required') throw linkRequired('This account awaits activation: follow the invitation mail first')
    const createdHere = existing.created_by_sso_connection_id === c.id
    const vouched = a.emailVerified && (await domainVerifiedFor(tx, c.tenant_id, domainOfEmail(a.email)))
    if (!createdHere && !vouched) throw linkRequired('This address has an account: sign in with it, then link single sign-on from your account')
    userId = existing.id
  } else {
    if (!a.emailVerified) throw new ApiError('OAUTH_EXCHANGE_FAILED', 'The identity provider did not say this email address is verified')
    const created = await insertPasswordlessUser(tx, a.email, a.name, c.id)
    if (!created) throw linkRequired('This address has an account: sign in with it, then link single sign-on from your account')
    userId = created
  }
  await linkSsoIdentity(tx, ctx, c, a.subject, userId) // recorded as user.sso_identity_linked when the link is new
  return userId
}
