// The one error catalogue: every code the v1 interface may return, with its HTTP status, and the named
// sets that routes declare. A route can raise only codes of the sets it declares (enforced in
// http/problem-mapping.ts).

const A400_BASE = [
  'AUTH_PROVIDER_NOT_CONFIGURED',
  'BAD_REQUEST',
  'CSRF_INVALID',
  'CURRENT_PASSWORD_INVALID',
  'CURRENT_PASSWORD_REQUIRED',
  'IDEMPOTENCY_KEY_INVALID',
  'IF_MATCH_INVALID',
  'OAUTH_ACCOUNT_LINK_REQUIRED',
  'OAUTH_EXCHANGE_FAILED',
  'OAUTH_STATE_INVALID',
  'PASSWORD_POLICY_VIOLATION',
  'PASSWORD_RESET_CODE_EXPIRED',
  'PASSWORD_RESET_CODE_INVALID',
  'PASSWORD_RESET_REQUEST_TOO_FREQUENT',
  'PASSWORD_RESET_TOKEN_EXPIRED',
  'PASSWORD_RESET_TOKEN_INVALID',
  'PASSWORD_REUSE_NOT_ALLOWED',
  'REGISTRATION_INVITATION_EXPIRED',
  'SSO_NOT_CONFIGURED',
  'TENANT_CONTEXT_MISMATCH',
  'TENANT_REQUIRED',
  'VALIDATION_ERROR',
] as const
// The /users family, MFA, passkeys and /api-keys add these to A400.
const A400_USERS_EXTRA = ['INITIAL_PASSWORD_REQUIRED', 'INVALID_PERMISSION_OVERLAY', 'INVALID_ROLE_TRANSITION'] as const
const PAGE_400 = ['PAGE_SIZE_TOO_LARGE', 'PAGE_TOKEN_INVALID', 'PAGE_TOKEN_QUERY_MISMATCH'] as const
const T400 = [
  'AUDIT_LOG_EXPORT_TOO_LARGE',
  'AUDIT_LOG_INVALID_TIME_RANGE',
  'AUDIT_LOG_TIME_RANGE_REQUIRED',
  'AUDIT_LOG_WINDOW_TOO_LARGE',
  'BAD_REQUEST',
  'BILLING_BLOCKED',
  'IDEMPOTENCY_KEY_INVALID',
  'IF_MATCH_INVALID',
  'INVALID_PERMISSION_OVERLAY',
  'INVALID_ROLE_TRANSITION',
  'LEGAL_HOLD_SCOPE_INVALID',
  'RETENTION_WINDOW_NOT_ELAPSED',
  'TENANT_CONTEXT_MISMATCH',
  'TENANT_NOT_OFFBOARDING',
  'TENANT_REQUIRED',
  'USAGE_SUMMARY_SCOPE_INVALID',
  'VALIDATION_ERROR',
] as const
const S400 = [
  'BAD_REQUEST',
  'IDEMPOTENCY_KEY_INVALID',
  'IF_MATCH_INVALID',
  'STORAGE_NOT_READY',
  'STORAGE_PROVIDER_NOT_CONFIGURED',
  'STORAGE_PROVISIONING_FAILED',
  'STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE',
  'STORAGE_REGION_NOT_AVAILABLE',
  'TENANT_CONTEXT_MISMATCH',
  'TENANT_REQUIRED',
  'VALIDATION_ERROR',
] as const
const M400 = [
  'BAD_REQUEST',
  'IDEMPOTENCY_KEY_INVALID',
  'IF_MATCH_INVALID',
  'IMPORTED_CHECKPOINT_INCOMPLETE',
  'IMPORTED_CHECKPOINT_INVALID_PATH',
  'MODEL_BUNDLE_OBJECTS_REQUIRED',
  'MODEL_BUNDLE_PREFIX_INVALID',
  'MODEL_BUNDLE_PREFIX_REQUIRED',
  'MODEL_VERSION_INVALID_STATUS',
  'TENANT_CONTEXT_MISMATCH',
  'TENANT_REQUIRED',
  'TRAINING_JOB_HAS_NO_OUTPUT_ARTIFACT',
  'TRAINING_JOB_NOT_COMPLETED',
  'VALIDATION_ERROR',
] as const
const U401 = [
  'TOKEN_MALFORMED',
  'TOKEN_NOT_FOUND',
  'TOKEN_EXPIRED',
  'TOKEN_REVOKED',
  'UNAUTHORIZED',
  'SESSION_EXPIRED',
  'ACTIVATION_REQUIRED',
  'MFA_REQUIRED',
] as const
const F403 = [
  'PERMISSION_DENIED',
  'PERMISSION_NOT_DECLARED',
  'FORBIDDEN',
  'MEMBERSHIP_NOT_FOUND',
  'MEMBERSHIP_DISABLED',
  'MEMBERSHIP_EXPIRED',
  'PROJECT_MEMBERSHIP_EXPIRED',
] as const
const A404 = ['NOT_FOUND', 'SESSION_NOT_FOUND', 'USER_NOTIFICATION_NOT_FOUND'] as const
const T404 = [
  'LEGAL_HOLD_NOT_FOUND',
  'LEGAL_HOLD_SCOPE_NOT_FOUND',
  'NOT_FOUND',
  'OFFBOARDING_REQUEST_NOT_FOUND',
  'RESOURCE_NOT_FOUND',
  'STORAGE_RECONCILIATION_JOB_NOT_FOUND',
  'SUBJECT_NOT_IN_TENANT',
  'SUBSCRIPTION_NOT_FOUND',
  'TENANT_DELETION_JOB_NOT_FOUND',
  'TENANT_NOT_FOUND',
  'USER_NOTIFICATION_NOT_FOUND',
] as const
const M404 = ['IMPORTED_CHECKPOINT_NOT_FOUND', 'MODEL_BUNDLE_JOB_NOT_FOUND', 'MODEL_VERSION_NOT_FOUND', 'NOT_FOUND', 'USER_NOTIFICATION_NOT_FOUND'] as const
const A409S = ['CURRENT_SESSION_NOT_REVOCABLE', 'EMAIL_ALREADY_REGISTERED', 'IDEMPOTENCY_CONFLICT'] as const
const A409 = [...A409S, 'LAST_OWNER_PROTECTION', 'USER_ALREADY_MEMBER'] as const
const T409 = [
  'BILLING_STATE_TRANSITION_INVALID',
  'DELETION_BLOCKED_BY_ACTIVE_WORK',
  'IDEMPOTENCY_CONFLICT',
  'INVOICE_SNAPSHOT_ALREADY_EXISTS',
  'LAST_OWNER_PROTECTION',
  'LEGAL_HOLD_ACTIVE',
  'LEGAL_HOLD_ALREADY_RELEASED',
  'OFFBOARDING_BLOCKED_BY_LEGAL_HOLD',
  'OFFBOARDING_BLOCKED_BY_LINEAGE',
  'OFFBOARDING_REQUEST_ALREADY_ACTIVE',
  'RECONCILIATION_ALREADY_RUNNING',
  'TENANT_DELETION_JOB_CONFLICT',
  'TENANT_DELETION_JOB_NOT_RETRYABLE',
  'TENANT_SLUG_CONFLICT',
  'TENANT_STORAGE_KEY_CONFLICT',
] as const
const INVITATION_400 = ['INVITATION_EXPIRED', 'INVITATION_INVALID'] as const
// Additive (issue 13), not in the published table: M400 for the model lists, and the embodiment profiles' conflicts.
const MODELS_SETS = {
  M400p: [...M400, ...PAGE_400],
  E409: ['EMBODIMENT_PROFILE_IN_USE', 'EMBODIMENT_PROFILE_NAME_CONFLICT'],
} as const
// Additive (issue 14): a redelivery, recovery or test event for a webhook endpoint that is disabled.
const WEBHOOK_DELIVERY_SETS = {
  WD409: ['WEBHOOK_ENDPOINT_DISABLED'],
} as const
// Additive (issue 36): a project's slug is taken in its tenant (TENANT_SLUG_CONFLICT would name the wrong thing).
const PROJECT_SETS = {
  PR409: ['PROJECT_SLUG_CONFLICT'],
} as const
// Additive (issue 37): the new-work gate (api/http/new-work.ts) refuses an operation that starts new work while the
// tenant is offboarding; the published catalogue has no code meaning that.
const NEW_WORK_SETS = {
  G409: ['TENANT_OFFBOARDING'],
  // Issue 38: the same gate refuses new work of a billing-blocked tenant with the catalogue's BILLING_BLOCKED, whose
  // published set (T400) most gated operations do not declare.
  G400: ['BILLING_BLOCKED'],
} as const
// Additive (issue 39): the device token endpoint's answers (RFC 8628 section 3.5), each carrying the RFC's name in `error`.
const DEVICE_SETS = {
  D400: ['DEVICE_ACCESS_DENIED', 'DEVICE_AUTHORIZATION_PENDING', 'DEVICE_CODE_EXPIRED', 'DEVICE_SLOW_DOWN'],
} as const
/** Sets of additive endpoints: declared here, documented in the OpenAPI, absent from the published table. */
export const ADDITIVE_SETS: readonly string[] = [
  ...Object.keys(MODELS_SETS),
  ...Object.keys(WEBHOOK_DELIVERY_SETS),
  ...Object.keys(PROJECT_SETS),
  ...Object.keys(NEW_WORK_SETS),
  ...Object.keys(DEVICE_SETS),
]
const INVITATION_409 = ['INVITATION_ALREADY_ACCEPTED', 'INVITATION_EMAIL_MISMATCH', 'INVITATION_REVOKED'] as const

/** Named error sets exactly as the published interface defines them. */
export const ErrorSets = {
  A400: [...A400_BASE, ...A400_USERS_EXTRA],
  A400s: A400_BASE, // A400 for the operations outside the /users family (sessions, public flows)
  A400p: [...A400_BASE, ...A400_USERS_EXTRA, ...PAGE_400],
  A400i: [...A400_BASE, ...INVITATION_400],
  T400,
  T400p: [...T400, ...PAGE_400],
  S400,
  M400,
  U401,
  F403,
  A404,
  A404r: [...A404, 'RESOURCE_NOT_FOUND'],
  T404,
  M404,
  A409,
  A409s: A409S,
  A409i: [...A409S, ...INVITATION_409],
  T409,
  M409: ['IDEMPOTENCY_CONFLICT', 'MODEL_BUNDLE_JOB_NOT_RUNNING'],
  ...MODELS_SETS,
  ...WEBHOOK_DELIVERY_SETS,
  ...PROJECT_SETS,
  ...NEW_WORK_SETS,
  ...DEVICE_SETS,
  P412: ['PRECONDITION_FAILED'],
  R429: ['RATE_LIMITED'],
  // Not an interface set: what any route may answer when the server itself fails.
  X5XX: ['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'],
  // Not an interface set either: a known path asked with a method it does not serve (with an Allow header).
  X405: ['METHOD_NOT_ALLOWED'],
  // Nor this: a request target over 16 KiB, refused on arrival (any operation, before its route is known).
  X431: ['REQUEST_HEADER_FIELDS_TOO_LARGE'],
} as const

export type ErrorSetName = keyof typeof ErrorSets
type SetCodes = (typeof ErrorSets)[ErrorSetName][number]
export type ErrorCode = SetCodes | (typeof INVITATION_400)[number] | (typeof INVITATION_409)[number]

const STATUS_OF_SET: Record<ErrorSetName, number> = {
  A400: 400,
  A400s: 400,
  A400p: 400,
  A400i: 400,
  T400: 400,
  T400p: 400,
  S400: 400,
  M400: 400,
  U401: 401,
  F403: 403,
  A404: 404,
  A404r: 404,
  T404: 404,
  M404: 404,
  A409: 409,
  A409s: 409,
  A409i: 409,
  T409: 409,
  M409: 409,
  M400p: 400,
  E409: 409,
  WD409: 409,
  PR409: 409,
  G409: 409,
  G400: 400,
  D400: 400,
  P412: 412,
  R429: 429,
  X5XX: 500,
  X405: 405,
  X431: 431,
}

/** code → HTTP status, derived from the sets so the two can never disagree. */
export const STATUS_OF: Record<ErrorCode, number> = (() => {
  const out: Record<string, number> = {}
  for (const [name, codes] of Object.entries(ErrorSets) as [ErrorSetName, readonly string[]][]) {
    for (const code of codes) out[code] = STATUS_OF_SET[name]
  }
  out.SERVICE_UNAVAILABLE = 503
  return out as Record<ErrorCode, number>
})()

export interface FieldError {
  path: string
  message: string
}

/** The only error type services throw on purpose; anything else becomes a 500 INTERNAL_ERROR. */
export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: {
      errors?: FieldError[]
      headers?: Record<string, string>
      budget?: RateBudget
      /** The OAuth error name (RFC 6749/8628) a device token answer carries as the problem's `error` member. */
      oauthError?: string
    } = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.status = STATUS_OF[code]
  }
}

/** Which budget ran out: named on the refusal so the rate-limit metric can say so. */
export type RateBudget = 'ip' | 'user' | 'tenant' | 'sign_in' | 'second_factor' | 'device_authorization' | 'device_code_entry'

/** 429 RATE_LIMITED with Retry-After and the RateLimit headers of the budget that ran out (one shape for the
 *  request budgets, sign-in throttling and second-factor attempts). */
export function rateLimited(what: string, b: { budget: RateBudget; limit: number; windowSeconds: number; retryAfter: number }): ApiError {
  return new ApiError('RATE_LIMITED', `${what}; retry in ${b.retryAfter} s`, {
    budget: b.budget,
    headers: {
      'retry-after': String(b.retryAfter),
      'ratelimit-limit': String(b.limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(b.retryAfter),
      'ratelimit-policy': `${b.limit};w=${b.windowSeconds}`,
    },
  })
}

export const fail = (code: ErrorCode, message: string, extra?: ApiError['extra']): never => {
  throw new ApiError(code, message, extra)
}

/** The union of codes for a route's declared sets, plus the server-failure codes every route may answer. */
export function codesOf(sets: readonly ErrorSetName[]): Set<string> {
  const out = new Set<string>(ErrorSets.X5XX)
  for (const s of sets) for (const c of ErrorSets[s]) out.add(c)
  return out
}
