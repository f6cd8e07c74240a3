// OIDC sign-in with openid-client: start (state, nonce, PKCE S256, all kept server-side and single use) → the
// provider → callback (code exchange, ID token checks) → account, just-in-time membership and a session.
import * as oidc from 'openid-client'
import type { Config } from '../platform/config'
import { sha256 } from '../platform/crypto'
import { open } from '../platform/keyring'
import type { ServiceDeps } from '../platform/deps'
import { domainOfEmail } from '../platform/email'
import { isUuid } from '../platform/ids'
import { ApiError } from '../platform/errors'
import { guardedFetchApi } from '../platform/outbound/fetch'
import { outboundPolicyOf } from '../platform/outbound/policy'
import type { Role } from '../identity/permissions'
import type { RequestContext } from '../identity/context'
import { ensureMembership } from '../memberships/queries'
import { recordAudit } from '../audit/service'
import { findIdentityUser, findSsoConnection, insertLoginState, takeLoginState, type SsoConnectionRow } from '../sso/queries'
import { findUserByEmail, findUserById } from '../users/queries'
import { claimAccount, SsoRefused } from './sso-claim'
import { tenantVerdict } from './policy'
import { openAuditedSession, recordSignInFailure, type SignInFailure } from './service'

export const SSO_STATE_COOKIE = 'rcp_sso_state'
const STATE_TTL_SECONDS = 600
const SCOPE = 'openid email profile'

type SsoDeps = Pick<ServiceDeps, 'sql' | 'config' | 'keys' | 'log'>

const notConfigured = (why: string) => new ApiError('SSO_NOT_CONFIGURED', why)
const refused = (reason: SignInFailure, why: string) => new SsoRefused(reason, 'SSO_NOT_CONFIGURED', why)

/** Every request openid-client makes for a connection (discovery, JWKS, token, userinfo) goes through the outbound
 *  guard. Plain-HTTP issuers are accepted only for loopback addresses outside production (a provider in a test). */
function discoveryOptions(config: Config, issuer: URL): oidc.DiscoveryRequestOptions {
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname)
  const insecure = issuer.protocol === 'http:' && loopback && config.NODE_ENV !== 'production'
  return { [oidc.customFetch]: guardedFetchApi({ policy: outboundPolicyOf(config) }), ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}) }
}

// The provider's own words stay in our log: echoed, they would tell a tenant what our network can reach.
function providerFailed(deps: SsoDeps, c: SsoConnectionRow, step: string, err: unknown, message: string): ApiError {
  const cause = (err as { cause?: unknown } | null)?.cause
  const detail = [err, cause].map((e) => (e as { detail?: unknown } | null)?.detail).find((d) => typeof d === 'string') // the outbound guard's
  deps.log.warn('sso provider request failed', { connectionId: c.id, step, error: String(err), cause: cause ? String(cause) : undefined, detail })
  return new SsoRefused('provider_failed', 'OAUTH_EXCHANGE_FAILED', message)
}

async function discover(deps: SsoDeps, c: SsoConnectionRow): Promise<oidc.Configuration> {
  const issuer = new URL(c.issuer)
  const secret = open(deps.keys, 'secrets', c.client_secret_sealed)
  try {
    return await oidc.discovery(issuer, c.client_id, secret, oidc.ClientSecretBasic(secret), discoveryOptions(deps.config, issuer))
  } catch (err) {
    throw providerFailed(deps, c, 'discovery', err, 'The identity provider could not be reached or gave an unusable answer')
  }
}

/** Only a path on this site: never an open redirect. */
export const safeReturnTo = (v: string | undefined): string | null => (v && /^\/(?![/\\])[\x21-\x7e]*$/.test(v) ? v : null)

export async function startSsoSignIn(deps: SsoDeps, connectionId: string, opts: { redirectUri: string; returnTo: string | null; linkUserId: string | null }) {
  const c = isUuid(connectionId) ? await findSsoConnection(deps.sql, connectionId) : undefined
  if (!c?.enabled) throw notConfigured('No enabled single sign-on connection has this id')
  const config = await discover(deps, c)
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const codeVerifier = oidc.randomPKCECodeVerifier()
  await insertLoginState(deps.sql, {
    stateHash: sha256(state),
    connectionId: c.id,
    nonce,
    codeVerifier,
    returnTo: opts.returnTo,
    linkUserId: opts.linkUserId,
    ttlSeconds: STATE_TTL_SECONDS,
  })
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: opts.redirectUri,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  })
  return { location: url.href, state, stateTtlSeconds: STATE_TTL_SECONDS }
}

/** How recently a session must have proven presence (sign-in or second factor) to link an identity to it. */
export const LINK_REAUTHENTICATION_SECONDS = 5 * 60

/** Linking is a state change the signed-in user asks for explicitly (never a GET a foreign site can trigger with the
 *  ambient cookie), from a session that authenticated within LINK_REAUTHENTICATION_SECONDS. */
export async function startSsoLink(deps: SsoDeps, ctx: RequestContext, input: { connectionId: string; returnTo?: string }, redirectUri: string) {
  const { principal } = ctx
  const auth = principal.authentication
  if (principal.credential !== 'session' || !auth) throw new ApiError('BAD_REQUEST', 'Only a signed-in session can link a single sign-on identity')
  if (Date.now() - auth.authenticatedAt.getTime() > LINK_REAUTHENTICATION_SECONDS * 1000) {
    throw new ApiError(
      'FORBIDDEN',
      `Sign in again (or answer your second factor) within ${LINK_REAUTHENTICATION_SECONDS / 60} minutes before linking an identity`,
    )
  }
  return startSsoSignIn(deps, input.connectionId, { redirectUri, returnTo: safeReturnTo(input.returnTo), linkUserId: principal.userId })
}

/** What a callback has established so far about who is signing in: a refusal is recorded against that account. */
interface Attempt {
  linkUserId?: string | null
  connectionId?: string
  subject?: string
  verifiedEmail?: string
}

/** The existing account a refused attempt concerns: the one the refusal named, the one asking to link, the one the
 *  provider's subject is linked to, or the one a provider-verified address belongs to. Read with the pool, after
 *  the rollback, so an account made in the refused transaction is no one. */
async function accountOf(db: SsoDeps['sql'], known: Attempt, err: SsoRefused): Promise<string | undefined> {
  if (err.userId) return err.userId
  if (known.linkUserId) return known.linkUserId
  const linked = known.connectionId && known.subject ? await findIdentityUser(db, known.connectionId, known.subject) : undefined
  return linked ?? (known.verifiedEmail ? (await findUserByEmail(db, known.verifiedEmail))?.id : undefined)
}

/** `callbackUrl` is the full URL the provider redirected to; `cookieState` the state cookie of this browser. Each
 *  refusal is recorded as user.sign_in_failed (method sso, its reason class) with the pool, so the rollback the
 *  error causes cannot take it: an account entry, in no tenant's log, never holding the address, code or claims. */
export async function finishSsoSignIn(deps: SsoDeps, ctx: RequestContext<null>, callbackUrl: URL, cookieState: string | undefined) {
  const known: Attempt = {}
  try {
    return await completeSsoSignIn(deps, ctx, callbackUrl, cookieState, known)
  } catch (err) {
    if (err instanceof SsoRefused) {
      await recordSignInFailure(
        deps.sql,
        ctx,
        'sso',
        err.reason,
        await accountOf(deps.sql, known, err),
        known.connectionId ? { ssoConnectionId: known.connectionId } : {},
      )
    }
    throw err
  }
}

async function completeSsoSignIn(deps: SsoDeps, ctx: RequestContext<null>, callbackUrl: URL, cookieState: string | undefined, known: Attempt) {
  const state = callbackUrl.searchParams.get('state')
  if (!state || state !== cookieState)
    throw new SsoRefused('state_invalid', 'OAUTH_STATE_INVALID', 'The sign-in state is missing or belongs to another browser; start again')
  const pending = await takeLoginState(deps.sql, sha256(state))
  if (pending) Object.assign(known, { linkUserId: pending.link_user_id, connectionId: pending.connection_id })
  if (!pending || pending.expires_at.getTime() <= Date.now())
    throw new SsoRefused('state_invalid', 'OAUTH_STATE_INVALID', 'This sign-in attempt is unknown, used or expired; start again')
  const c = await findSsoConnection(deps.sql, pending.connection_id)
  if (!c?.enabled) throw refused('connection_disabled', 'This single sign-on connection was disabled')
  const config = await discover(deps, c)
  let claims: oidc.IDToken & Partial<oidc.UserInfoResponse>
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.code_verifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    })
    claims = tokens.claims()!
    // Providers may keep email and name out of the ID token for the code flow; the userinfo endpoint has them.
    if (typeof claims.email !== 'string') claims = { ...claims, ...(await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)), sub: claims.sub }
  } catch (err) {
    throw providerFailed(deps, c, 'code exchange', err, 'The identity provider did not complete the sign-in')
  }
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : ''
  // Only what finds the account a refusal concerns; an address the provider did not vouch for names no one.
  known.subject = claims.sub
  if (email && claims.email_verified === true) known.verifiedEmail = email
  if (!email || claims.email_verified === false)
    throw new SsoRefused('email_unverified', 'OAUTH_EXCHANGE_FAILED', 'The identity provider sent no verified email address')
  const domain = domainOfEmail(email)
  if (c.email_domains.length > 0 && !c.email_domains.includes(domain)) {
    throw refused('domain_not_covered', `Single sign-on of this tenant does not cover ${domain}`)
  }
  const assertion = {
    subject: claims.sub,
    email,
    emailVerified: claims.email_verified === true,
    name: typeof claims.name === 'string' ? claims.name.slice(0, 200) : null,
  }
  // The landing rule of every sign-in (api/sign-in/policy.ts): a tenant may keep a connection but stop taking SSO.
  // SSO_NOT_CONFIGURED, not 403: this public callback documents its 400 set only.
  const facts = { method: 'sso' as const, ssoTenantId: c.tenant_id, secondFactor: true, hasSecondFactor: false }
  if ((await tenantVerdict(deps.sql, deps, c.tenant_id, facts)) !== 'admitted')
    throw refused('method_not_allowed', 'This organisation does not take single sign-on sign-ins')

  return deps.sql.begin(async (tx) => {
    const { userId, created } = await claimAccount(tx, ctx, c, assertion, pending.link_user_id)
    const user = await findUserById(tx, userId)
    if (!user || user.status === 'disabled') throw new SsoRefused('not_active', 'OAUTH_EXCHANGE_FAILED', 'This account is disabled', user?.id)
    if (user.status === 'activation_required') {
      throw new SsoRefused('not_active', 'OAUTH_ACCOUNT_LINK_REQUIRED', 'This account awaits activation: follow the invitation mail first', user.id)
    }
    const membership = await ensureMembership(tx, c.tenant_id, userId, c.default_role as Role)
    // The tenant's owners see who was given access, by which connection and with which role; a sign-in that finds
    // the membership already there (even disabled or removed) gives nothing and records nothing here.
    if (membership.created) {
      await recordAudit(tx, ctx, {
        action: 'membership.sso_provisioned',
        tenantId: c.tenant_id,
        subjectUserId: userId,
        actorUserId: userId,
        target: { type: 'membership', id: membership.id },
        details: { connectionId: c.id, role: c.default_role, accountCreated: created },
      })
    }
    // The provider authenticated the user: its sign-in stands in for our second factor, in this tenant only.
    const session = await openAuditedSession(tx, deps, ctx, userId, membership.id, { method: 'sso', ssoConnectionId: c.id, secondFactorVerified: true })
    return { session, returnTo: pending.return_to }
  })
}
