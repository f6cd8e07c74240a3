// The device authorization grant (RFC 8628): a terminal or a robot asks for a token and shows a short user code; a
// person signed in to the console enters it, sees who asks for what, and approves for one of their tenants or
// denies; the device polls until it gets its answer. docs/api.md "Device authorization" says why each rule is so.
import { randomBytes } from 'node:crypto'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { publicBase } from '../platform/config'
import { randomToken, safeEqual, sha256 } from '../platform/crypto'
import { ApiError, rateLimited } from '../platform/errors'
import type { RequestContext } from '../identity/context'
import { ROLE_PERMISSIONS, type Permission } from '../identity/permissions'
import { newPat } from '../identity/tokens'
import { recordAudit } from '../audit/service'
import { requireGoodStanding } from '../identity/standing'
import { PAT_DEFAULT_DAYS } from '../api-keys/model'
import { billingBlockReasons } from '../billing/block'
import { lockTenantLifecycle } from '../tenants/queries'
import { insertApiKey } from '../api-keys/queries'
import { listUserMemberships, lockMembershipStanding } from '../memberships/queries'
import { leaseTokens } from '../rate-budgets/queries'
import { refusal, sessionFacts, tenantVerdict } from '../sign-in/policy'
import { DEVICE_CODE_LIFETIME_SECONDS, DEVICE_PAGE_PATH, POLL_INTERVAL_SECONDS, USER_CODE_ALPHABET, USER_CODE_LENGTH } from './model'
import {
  decide,
  findPendingByUserCode,
  insertDeviceAuthorization,
  lockForPoll,
  markDelivered,
  recordPoll,
  refuseApproved,
  type DeviceAuthorizationRow,
} from './queries'

const DAY = 86_400_000

/** The replica's own token buckets (api/http/rate-limit.ts), as the address budgets use them. */
export interface AddressBudget {
  admit(kind: string, id: string, perMinute: number): number
}

/** A user code drawn uniformly from the alphabet (rejection sampling: 240 = 12 × 20). */
export function newUserCode(): string {
  let code = ''
  while (code.length < USER_CODE_LENGTH) {
    for (const b of randomBytes(16)) {
      if (b < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[b % USER_CODE_ALPHABET.length]
    }
  }
  return code
}

export const showUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`

/** What a person typed, as stored: upper case, without dashes or spaces; null when it cannot be a user code. */
export function normaliseUserCode(typed: string): string | null {
  const code = typed.toUpperCase().replace(/[\s-]/g, '')
  if (code.length !== USER_CODE_LENGTH) return null
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return null
  return code
}

const deviceCodeHash = (deviceCode: string) => sha256(`device:${deviceCode}`)
const userCodeHash = (code: string) => sha256(`user-code:${code}`)

/** POST /device/authorizations: public, one of the address's budget of new authorizations (per replica, as every
 *  address budget is). */
export async function startDeviceAuthorization(
  { sql, config }: Pick<ServiceDeps, 'sql' | 'config'>,
  budget: AddressBudget,
  ctx: RequestContext<null>,
  input: { clientName: string; scopes: string[] },
) {
  const perMinute = config.RATE_LIMIT_DEVICE_AUTHORIZATIONS_PER_MINUTE
  const retryAfter = budget.admit('device_authorization', ctx.ip ?? 'unknown', perMinute)
  if (retryAfter > 0) {
    throw rateLimited('Too many device authorizations from this address', { budget: 'device_authorization', limit: perMinute, windowSeconds: 60, retryAfter })
  }
  const deviceCode = randomToken(32)
  const scopes = [...new Set(input.scopes)]
  // Two live codes colliding is rare (one in 2.5e10 per pair); a collision draws again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const userCode = newUserCode()
    const row = await insertDeviceAuthorization(sql, {
      deviceCodeHash: deviceCodeHash(deviceCode),
      userCodeHash: userCodeHash(userCode),
      clientName: input.clientName,
      scopes,
      clientIp: ctx.ip,
      lifetimeSeconds: DEVICE_CODE_LIFETIME_SECONDS,
      interval: POLL_INTERVAL_SECONDS,
    })
    if (!row) continue
    const page = `${publicBase(config)}${DEVICE_PAGE_PATH}`
    const shown = showUserCode(userCode)
    return {
      deviceCode,
      userCode: shown,
      verificationUri: page,
      verificationUriComplete: `${page}?user_code=${shown}`,
      expiresIn: DEVICE_CODE_LIFETIME_SECONDS,
      interval: row.interval_seconds,
    }
  }
  throw new Error('could not draw a free user code in 5 attempts')
}

const deviceError = (code: 'DEVICE_AUTHORIZATION_PENDING' | 'DEVICE_SLOW_DOWN' | 'DEVICE_CODE_EXPIRED' | 'DEVICE_ACCESS_DENIED', message: string) =>
  new ApiError(code, message, {
    oauthError: {
      DEVICE_AUTHORIZATION_PENDING: 'authorization_pending',
      DEVICE_SLOW_DOWN: 'slow_down',
      DEVICE_CODE_EXPIRED: 'expired_token',
      DEVICE_ACCESS_DENIED: 'access_denied',
    }[code],
  })

type PollOutcome =
  | { refusal: ApiError }
  | { token: string; tokenType: 'Bearer'; expiresAt: string; tenantId: string; scopes: string[]; apiKeyId: string; membershipId: string }

/** POST /device/tokens: the device's poll. The poll is recorded (and the interval grown) in a transaction that
 *  commits before a refusal is answered; an approved authorization's PAT is minted here, once, in the transaction
 *  that spends the device code, so no token is ever stored. */
export async function pollDeviceToken({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext<null>, deviceCode: string) {
  const outcome = await sql.begin(async (tx): Promise<PollOutcome> => {
    const row = await lockForPoll(tx, deviceCodeHash(deviceCode))
    if (!row) return { refusal: deviceError('DEVICE_CODE_EXPIRED', 'No device authorization has this device code') }
    if (row.status === 'delivered') return { refusal: deviceError('DEVICE_CODE_EXPIRED', 'This device code has been used: its token was answered once') }
    if (row.expired) return { refusal: deviceError('DEVICE_CODE_EXPIRED', 'This device code has expired: start again') }
    if (row.status === 'denied') {
      await recordPoll(tx, row.id, false)
      return { refusal: deviceError('DEVICE_ACCESS_DENIED', 'The person denied this device authorization') }
    }
    if (row.status === 'pending') {
      const interval = await recordPoll(tx, row.id, row.too_fast)
      return row.too_fast
        ? { refusal: deviceError('DEVICE_SLOW_DOWN', `Polled sooner than the interval: wait ${interval} s between polls from now on`) }
        : { refusal: deviceError('DEVICE_AUTHORIZATION_PENDING', 'Not approved yet: poll again after the interval') }
    }
    return mintApproved(tx, ctx, row as Approved)
  })
  if ('refusal' in outcome) throw outcome.refusal
  const { apiKeyId: _k, membershipId: _m, ...token } = outcome
  return token
}

type Approved = DeviceAuthorizationRow & { tenant_id: string; user_id: string; membership_id: string }

/** Why an approval no longer holds when the device collects (up to 10 minutes later), or null when it still does.
 *  The tenant's row is locked first, as approval and every membership change lock it, then the membership: an
 *  offboarding, a block or a membership change either commits before this read or waits for the collection. */
async function lapsedApproval(tx: Db, row: Approved): Promise<string | null> {
  const lifecycle = (await lockTenantLifecycle(tx, row.tenant_id)) ?? 'deleted'
  try {
    requireGoodStanding({ lifecycle, billingBlock: await billingBlockReasons(tx, row.tenant_id) })
  } catch (err) {
    if (err instanceof ApiError) return err.code === 'BILLING_BLOCKED' ? 'tenant_billing_blocked' : 'tenant_offboarding'
    throw err
  }
  const m = await lockMembershipStanding(tx, row.membership_id)
  if (!m?.live) return 'membership_not_active'
  const held = ROLE_PERMISSIONS[m.role]
  if (!row.scopes.every((s) => held.includes(s as Permission))) return 'scopes_beyond_role'
  return null
}

async function mintApproved(tx: Db, ctx: RequestContext<null>, row: Approved): Promise<PollOutcome> {
  const lapsed = await lapsedApproval(tx, row)
  if (lapsed) {
    await refuseApproved(tx, row.id)
    await recordAudit(tx, ctx, {
      action: 'device_authorization.refused',
      tenantId: row.tenant_id,
      subjectUserId: row.user_id,
      target: { type: 'device_authorization', id: row.id },
      details: { reason: lapsed, clientName: row.client_name, scopes: row.scopes, clientAddress: row.client_ip, membershipId: row.membership_id },
    })
    return { refusal: deviceError('DEVICE_ACCESS_DENIED', 'The approval no longer holds: the approver or the tenant changed since; start again') }
  }
  const { token, hash, displayPrefix } = newPat()
  const key = await insertApiKey(tx, {
    tenantId: row.tenant_id,
    userId: row.user_id,
    membershipId: row.membership_id,
    name: `${row.client_name} (device sign-in)`,
    tokenHash: hash,
    displayPrefix,
    scopes: row.scopes,
    projectId: null,
    expiresAt: new Date(Date.now() + PAT_DEFAULT_DAYS * DAY),
  })
  await markDelivered(tx, row.id, key.id)
  // The approver made this token: the entry names them, from the device's address and request.
  await recordAudit(tx, ctx, {
    action: 'api_key.created',
    actorUserId: row.user_id,
    tenantId: key.tenant_id,
    subjectUserId: key.user_id,
    target: { type: 'api_key', id: key.id },
    details: { name: key.name, scopes: key.scopes, expiresAt: key.expires_at.toISOString(), projectId: null, deviceAuthorizationId: row.id },
  })
  return {
    token,
    tokenType: 'Bearer',
    expiresAt: key.expires_at.toISOString(),
    tenantId: key.tenant_id,
    scopes: key.scopes,
    apiKeyId: key.id,
    membershipId: key.membership_id,
  }
}

// ── The person's side: a signed-in session enters the user code ──────────────────────────────────────────

/** User codes a user may enter (right or wrong) before more are refused: a bucket per user in Postgres
 *  (api/rate-budgets), so it holds across replicas. Each entry takes its token before the code is compared, in one
 *  statement under the bucket's row lock, so guesses fired in parallel get no more comparisons than guesses in turn
 *  (a check that read the bucket and then charged a miss would let them all through at once). */
async function spendEntry({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, userId: string): Promise<void> {
  const perMinute = config.RATE_LIMIT_DEVICE_CODE_ENTRIES_PER_MINUTE
  if (perMinute <= 0) return
  const taken = await leaseTokens(sql, 'device_code_entry', userId, perMinute, 1)
  if (taken < 1) {
    const retryAfter = Math.max(1, Math.ceil(-taken))
    throw rateLimited('Too many user codes entered', { budget: 'device_code_entry', limit: perMinute, windowSeconds: 60, retryAfter })
  }
}

const notFound = () => new ApiError('NOT_FOUND', 'No pending device authorization has this code: check it on the device, or start again there')

/** The pending authorization a typed user code names. The row is read by the code's digest, then the digests are
 *  compared in constant time. `spend`: this request's entry of a code (once per request). */
async function pendingFor(deps: Pick<ServiceDeps, 'sql' | 'config'>, db: Db, ctx: RequestContext, typed: string, o: { lock?: boolean; spend: boolean }) {
  if (o.spend) await spendEntry(deps, ctx.principal.userId)
  const code = normaliseUserCode(typed)
  const digest = code === null ? null : userCodeHash(code)
  const row = digest && (await findPendingByUserCode(db, digest, o.lock))
  if (!row || !digest || !safeEqual(row.user_code_hash, digest)) throw notFound()
  return row
}

const summaryOf = (r: DeviceAuthorizationRow) => ({
  clientName: r.client_name,
  scopes: r.scopes,
  clientAddress: r.client_ip,
  createdAt: r.created_at.toISOString(),
  expiresAt: r.expires_at.toISOString(),
})

/** GET /device/authorizations/lookup: what the device asks for, before the person decides. */
export async function lookUpDeviceAuthorization(deps: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, userCode: string) {
  return summaryOf(await pendingFor(deps, deps.sql, ctx, userCode, { spend: true }))
}

/** The approver's membership in the tenant they approve for: 404 TENANT_NOT_FOUND for a tenant they are not a member
 *  of (whether it exists is not told), 403 as a tenant switch answers for a disabled or expired membership. */
async function membershipFor({ sql }: Pick<ServiceDeps, 'sql'>, userId: string, tenantId: string) {
  const m = (await listUserMemberships(sql, userId)).find((x) => x.tenant_id === tenantId)
  if (!m) throw new ApiError('TENANT_NOT_FOUND', 'You are not a member of a tenant with this id')
  if (m.status === 'disabled') throw new ApiError('MEMBERSHIP_DISABLED', 'Your membership in that tenant is disabled')
  if (m.status === 'expired') throw new ApiError('MEMBERSHIP_EXPIRED', 'Your membership in that tenant has expired')
  return m
}

/** POST /device/authorizations/approve: the approver must be a member of the tenant, whose policy must admit the
 *  way this session signed in (as a switch into it would), and must hold every scope asked for there. */
export async function approveDeviceAuthorization(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  ctx: RequestContext,
  input: { userCode: string; tenantId: string },
) {
  const { principal } = ctx
  const first = await pendingFor(deps, deps.sql, ctx, input.userCode, { spend: true })
  const m = await membershipFor(deps, principal.userId, input.tenantId)
  const facts = await sessionFacts(deps.sql, principal)
  const verdict = facts ? await tenantVerdict(deps.sql, deps, m.tenant_id, facts) : 'method_not_allowed'
  if (verdict !== 'admitted') throw refusal(verdict)
  const held = ROLE_PERMISSIONS[m.role]
  const beyond = first.scopes.filter((s) => !held.includes(s as Permission))
  if (beyond.length > 0) {
    throw new ApiError('INVALID_PERMISSION_OVERLAY', `The device asks for scopes your role in that tenant does not give: ${beyond.join(', ')}`)
  }
  return deps.sql.begin(async (tx) => {
    const row = await pendingFor(deps, tx, ctx, input.userCode, { lock: true, spend: false })
    // The new-work gate, for the tenant approved for (a token is new work there, as POST /api-keys is); the tenant's
    // row lock orders this against an offboarding that starts meanwhile.
    const lifecycle = (await lockTenantLifecycle(tx, m.tenant_id)) ?? 'deleted'
    requireGoodStanding({ lifecycle, billingBlock: await billingBlockReasons(tx, m.tenant_id) })
    if (!(await decide(tx, row.id, { status: 'approved', userId: principal.userId, membershipId: m.id }))) throw notFound()
    await recordAudit(tx, ctx, {
      action: 'device_authorization.approved',
      tenantId: m.tenant_id,
      target: { type: 'device_authorization', id: row.id },
      details: { clientName: row.client_name, scopes: row.scopes, clientAddress: row.client_ip, membershipId: m.id },
    })
    return { status: 'approved' as const, clientName: row.client_name, scopes: row.scopes, tenantId: m.tenant_id }
  })
}

/** POST /device/authorizations/deny: the device's next poll answers access_denied. */
export async function denyDeviceAuthorization(deps: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, input: { userCode: string }) {
  const { principal } = ctx
  return deps.sql.begin(async (tx) => {
    const row = await pendingFor(deps, tx, ctx, input.userCode, { lock: true, spend: true })
    if (!(await decide(tx, row.id, { status: 'denied', userId: principal.userId, membershipId: null }))) throw notFound()
    await recordAudit(tx, ctx, {
      action: 'device_authorization.denied',
      target: { type: 'device_authorization', id: row.id },
      details: { clientName: row.client_name, scopes: row.scopes, clientAddress: row.client_ip },
    })
    return { status: 'denied' as const, clientName: row.client_name, scopes: row.scopes, tenantId: null }
  })
}
