// The one rule for "does this authentication satisfy tenant T's policy". Every way a session comes to sit in a
// membership asks it: the landing of a fresh sign-in, a membership switch, the acceptance of an invitation by a
// signed-in session, and tenant creation. Nothing else decides it.
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import type { Principal } from '../identity/service'
import { getAuthPolicy, policyOf } from '../auth-policy/service'
import type { TenantAuthPolicy } from '../auth-policy/model'
import { pendingOf, pendingSecondFactors, type SecondFactors } from '../mfa/challenges'
import { domainOfEmail } from '../platform/email'
import type { MembershipViewRow } from '../memberships/queries'
import { switchSessionMembership, type AuthMethod } from '../sessions/queries'
import { findSsoConnection } from '../sso/queries'
import type { UserRow } from '../users/queries'
import { findSignInAccount } from './queries'
import { sessionLifetimes } from './session-start'

type Deps = Pick<ServiceDeps, 'config'>

/** What the rule needs to know of an authentication. For a fresh sign-in, `secondFactor` is what the session will
 *  hold once its sign-in challenge is answered (it reaches nothing before). */
export interface AuthFacts {
  method: AuthMethod
  /** The tenant whose connection an SSO sign-in went through. */
  ssoTenantId: string | null
  /** A second factor (TOTP, recovery code, passkey) was verified in this session. */
  secondFactor: boolean
  /** The account has a second factor at all; without one, an MFA-required tenant gates the session to enrolment. */
  hasSecondFactor: boolean
  /** Given for the landing of a fresh sign-in: the tenants that verified the account's email domain. There SSO
   *  enforcement binds only those tenants, so an unproven domain claim cannot lock anyone out of signing in; a
   *  session moving into a tenant always obeys that tenant's enforcement. */
  domainVerifiedBy?: string[]
}

export type Verdict = 'admitted' | 'method_not_allowed' | 'second_factor_required'

/** SSO enforcement means this tenant's own identity provider: another tenant's connection does not satisfy it.
 *  An SSO sign-in stands in for the second factor only in its connection's own tenant. An account without any
 *  second factor is admitted to an MFA-required tenant and gated to enrolment there (as a fresh sign-in is). */
export function policyVerdict(policy: TenantAuthPolicy, f: AuthFacts): Verdict {
  const ownSso = f.method === 'sso' && f.ssoTenantId === policy.tenantId
  const ssoEnforced = policy.ssoEnforced && (ownSso || !f.domainVerifiedBy || f.domainVerifiedBy.includes(policy.tenantId))
  if (ssoEnforced ? !ownSso : !policy.allowedSignInMethods.includes(f.method)) return 'method_not_allowed'
  const verified = f.secondFactor || ownSso
  // Another tenant's provider never met our second factor: an account that has one must answer it (as at any
  // password sign-in) before an SSO session enters a tenant other than the connection's, MFA policy or not.
  if (f.method === 'sso' && !ownSso && f.hasSecondFactor && !f.secondFactor) return 'second_factor_required'
  return policy.mfaRequired && f.hasSecondFactor && !verified ? 'second_factor_required' : 'admitted'
}

/** A tenant's policy and its verdict on an authentication. */
async function judged(db: Db, deps: Deps, tenantId: string, f: AuthFacts): Promise<{ policy: TenantAuthPolicy; verdict: Verdict }> {
  const { policy } = await getAuthPolicy(db, tenantId, deps.config)
  return { policy, verdict: policyVerdict(policy, f) }
}

export async function tenantVerdict(db: Db, deps: Deps, tenantId: string, f: AuthFacts): Promise<Verdict> {
  return (await judged(db, deps, tenantId, f)).verdict
}

export async function hasSecondFactor(db: Db, userId: string): Promise<boolean> {
  return (await pendingSecondFactors(db, userId)) !== null
}

/** The facts of a live session; null for a PAT (bound to its membership, it never moves). */
export async function sessionFacts(db: Db, p: Principal): Promise<AuthFacts | null> {
  const a = p.credential === 'session' ? p.authentication : null
  if (!a) return null
  const ssoTenantId = a.method === 'sso' && a.ssoConnectionId ? ((await findSsoConnection(db, a.ssoConnectionId))?.tenant_id ?? null) : null
  return { method: a.method, ssoTenantId, secondFactor: a.secondFactorAt !== null, hasSecondFactor: await hasSecondFactor(db, p.userId) }
}

/** The refusal a caller sees: 403 for a method the tenant does not take, 401 MFA_REQUIRED for a missing factor. */
export function refusal(v: Exclude<Verdict, 'admitted'>): ApiError {
  return v === 'method_not_allowed'
    ? new ApiError(
        'FORBIDDEN',
        "That organisation's policy does not accept the way this session signed in: sign in with a method it allows (single sign-on through its own provider, if it enforces it)",
      )
    : new ApiError(
        'MFA_REQUIRED',
        'That organisation requires a second factor and this session has not verified one: sign in again and answer the second-factor challenge',
      )
}

/** Moves a session into a membership of `tenantId` when its policy admits the session's authentication, under
 *  that tenant's lifetimes (the absolute deadline only shrinks). Returns the verdict; nothing moves otherwise. */
export async function moveSessionInto(tx: Db, deps: Deps, p: Principal, membership: { id: string; tenantId: string }): Promise<Verdict> {
  const facts = await sessionFacts(tx, p)
  if (!facts) return 'method_not_allowed'
  const verdict = await tenantVerdict(tx, deps, membership.tenantId, facts)
  if (verdict !== 'admitted') return verdict
  const lifetimes = await sessionLifetimes(tx, deps, membership.id)
  await switchSessionMembership(tx, { sessionId: p.credentialId, userId: p.userId, membershipId: membership.id, ...lifetimes })
  return verdict
}

/** What a fresh sign-in knows of its account: read once (queries.ts findSignInAccount), then handed to the landing,
 *  the session and the answer. */
export interface Signer {
  user: UserRow
  memberships: MembershipViewRow[]
  /** The account's second factors; null without any. */
  factors: SecondFactors | null
  /** The policy of each tenant the account is an active member of. */
  policies: Map<string, TenantAuthPolicy>
  /** Those of its tenants that verified the account's email domain. */
  domainVerifiedBy: string[]
}

/** The account by address or id, with all the rest, in one round trip; undefined for no such account. */
export async function findSigner(db: Db, deps: Deps, by: { email: string } | { id: string }): Promise<Signer | undefined> {
  const row = await findSignInAccount(db, by)
  if (!row) return undefined
  const { memberships, member_tenants: tenants, totp, webauthn, ...user } = row
  const domain = domainOfEmail(user.email)
  return {
    user,
    memberships,
    factors: pendingOf({ totp, webauthn }),
    policies: new Map(tenants.map((t) => [t.tenant_id, policyOf(t.tenant_id, t.policy ?? undefined, deps.config)])),
    domainVerifiedBy: tenants.filter((t) => t.verified_domains.includes(domain)).map((t) => t.tenant_id),
  }
}

/** Where a password or passkey sign-in lands: the first active membership whose tenant's policy admits it, with that
 *  policy. A password sign-in of an account with a second factor counts as verified: its challenge gates the session
 *  until answered. `blocked` when the user has active memberships and none admits the sign-in. */
export function landingMembership(
  deps: Deps,
  who: Signer,
  method: 'password' | 'passkey',
): { membershipId: string | null; policy: TenantAuthPolicy | null; blocked: boolean } {
  const active = who.memberships.filter((m) => m.status === 'active')
  if (active.length === 0) return { membershipId: null, policy: null, blocked: false }
  const factor = who.factors !== null
  const facts = { method, ssoTenantId: null, secondFactor: method === 'passkey' || factor, hasSecondFactor: factor, domainVerifiedBy: who.domainVerifiedBy }
  for (const m of active) {
    const policy = who.policies.get(m.tenant_id) ?? policyOf(m.tenant_id, undefined, deps.config)
    if (policyVerdict(policy, facts) === 'admitted') return { membershipId: m.id, policy, blocked: false }
  }
  return { membershipId: null, policy: null, blocked: true }
}
