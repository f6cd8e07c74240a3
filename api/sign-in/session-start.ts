import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import type { Principal } from '../identity/service'
import type { RequestContext } from '../identity/context'
import { getAuthPolicy } from '../auth-policy/service'
import type { TenantAuthPolicy } from '../auth-policy/model'
import { auditRowOf, type AuditEntryInput } from '../audit/service'
import { newSessionToken } from '../identity/tokens'
import { tenantOfMembership } from '../memberships/queries'
import { challengeOptions, pendingSecondFactors, type MfaChallenge, type SecondFactors, type SessionState } from '../mfa/challenges'
import { CHALLENGE_TTL_SECONDS } from '../mfa/webauthn'
import type { AuthMethod } from '../sessions/queries'
import { insertSession } from './queries'
import { clientOf } from '../notifications/client-key'
import { newClientNotice } from '../notifications/queries'
import { mailNotice } from '../notifications/service'

type Deps = Pick<ServiceDeps, 'config' | 'keys'>
type ConfigDeps = Pick<ServiceDeps, 'config'>

export interface NewSession {
  id: string
  token: string
  expiresAt: Date
  state: SessionState
  /** Set when state is mfa_required: what the client answers at POST /sessions/mfa-challenges/confirmations. */
  mfaChallenge?: MfaChallenge
}

type Lifetimes = { absoluteSeconds: number; idleSeconds: number }

/** A session's lifetimes under its tenant's auth policy, or the configured defaults without a tenant. */
const lifetimesUnder = (deps: ConfigDeps, policy: TenantAuthPolicy | null): Lifetimes =>
  policy
    ? { absoluteSeconds: policy.sessionAbsoluteMinutes * 60, idleSeconds: policy.sessionIdleMinutes * 60 }
    : { absoluteSeconds: deps.config.SESSION_ABSOLUTE_HOURS * 3600, idleSeconds: deps.config.SESSION_IDLE_MINUTES * 60 }

/** The auth policy of a membership's tenant; null without a membership. */
async function policyOfMembership(tx: Db, deps: ConfigDeps, membershipId: string | null): Promise<TenantAuthPolicy | null> {
  const tenantId = membershipId ? await tenantOfMembership(tx, membershipId) : undefined
  return tenantId ? (await getAuthPolicy(tx, tenantId, deps.config)).policy : null
}

export async function sessionLifetimes(tx: Db, deps: ConfigDeps, membershipId: string | null): Promise<Lifetimes> {
  return lifetimesUnder(deps, await policyOfMembership(tx, deps, membershipId))
}

/** What a fresh sign-in already read (policy.ts Signer, landingMembership): the account's second factors and the
 *  landing tenant's policy. Without it, startSession reads both. */
export interface KnownAtSignIn {
  factors: SecondFactors | null
  policy: TenantAuthPolicy | null
}

export interface SessionOptions {
  method: AuthMethod
  ssoConnectionId?: string
  secondFactorVerified?: boolean
  passwordChangeRequired?: boolean
  known?: KnownAtSignIn
  /** The audit entry of the session, written by the session's own statement: a session exists exactly when its
   *  entry does, without a transaction around them. */
  entry?: (s: { id: string; state: SessionState }) => AuditEntryInput
}

/** Lucia-style: a random token the client keeps, its SHA-256 the only thing stored. A user with a second factor
 *  gets a gated session and a challenge, unless the session is opened by that factor itself (a passkey). With
 *  `known`, the session, its challenge and its entry take one statement and nothing is read. */
export async function startSession(
  tx: Db,
  deps: Deps,
  userId: string,
  membershipId: string | null,
  ctx: RequestContext<Principal | null>,
  opts: SessionOptions,
): Promise<NewSession> {
  const { token, hash } = newSessionToken()
  const factors = opts.secondFactorVerified ? null : opts.known ? opts.known.factors : await pendingSecondFactors(tx, userId)
  const policy = opts.known ? opts.known.policy : await policyOfMembership(tx, deps, membershipId)
  // A member of a tenant whose policy requires MFA, without any second factor, may only enrol one.
  const enrolOnly = opts.secondFactorVerified !== true && policy?.mfaRequired === true
  const state: SessionState = factors ? 'mfa_required' : enrolOnly ? 'mfa_enrolment_required' : 'active'
  const challenge = factors ? await challengeOptions(deps.config, factors) : null
  // Chosen here, not by the table's default, so the audit entry naming the session goes in the same statement.
  const id = crypto.randomUUID()
  // The new-client notice goes in the session's own statement: it exists exactly when the session does.
  const client = clientOf(ctx)
  const fields = { method: opts.method, client: client.client, network: client.network }
  const notice = newClientNotice(tx, { userId, clientKey: client.key, fields, dedupeKey: `sign_in:${id}` })
  const row = await insertSession(
    tx,
    {
      id,
      userId,
      tokenHash: hash,
      membershipId,
      userAgent: ctx.userAgent?.slice(0, 512) ?? null,
      ip: ctx.ip,
      ...lifetimesUnder(deps, policy),
      mfaPending: factors !== null,
      passwordChangeRequired: opts.passwordChangeRequired ?? false,
      // An SSO sign-in is no second factor of ours: it stands in for one only in its own tenant (policy.ts).
      authMethod: opts.method,
      ssoConnectionId: opts.ssoConnectionId ?? null,
      secondFactorVerified: opts.secondFactorVerified === true && opts.method !== 'sso',
    },
    challenge ? { webauthnChallenge: challenge.webauthn?.challenge ?? null, ttlSeconds: CHALLENGE_TTL_SECONDS } : null,
    opts.entry ? auditRowOf(ctx, opts.entry({ id, state })) : null,
    notice,
  )
  // Rare (a client unseen for 90 days), so its mail may cost the sign-in a statement or three more. Started by the
  // mail sweep: this may run inside a transaction that has not committed yet.
  if (row.notice_id) await mailNotice(tx, deps.keys, userId, 'account.new_sign_in', fields, null)
  const session = { id, token, expiresAt: row.expires_at, state }
  return challenge
    ? { ...session, mfaChallenge: { id: row.challenge_id!, methods: challenge.methods, webauthn: challenge.webauthn, expiresAt: row.challenge_expires_at! } }
    : session
}
