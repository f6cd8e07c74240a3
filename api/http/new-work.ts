import { NEW_WORK_GATE_SETS, requireGoodStanding } from '../identity/standing'
import type { Membership } from '../identity/service'

/** The one list of operations that start new work in the caller's tenant, with what each starts. While the tenant is
 *  not in good standing (offboarding, or any other reason in api/identity/standing.ts) they are refused; every other
 *  operation keeps working. Keys are `METHOD /v1/path` as the OpenAPI document writes them. */
export const NEW_WORK: Readonly<Record<string, string>> = {
  'POST /v1/api-keys': 'a new personal access token',
  'POST /v1/users': 'a new member (an administrator provisioning an account into the tenant)',
  'POST /v1/tenant-invitations': 'a new invitation, which becomes a member',
  'POST /v1/tenant-invitations/acceptance-records': "a new member (checked against the invitation's tenant, not the caller's)",
  'POST /v1/tenants/current/sso-connections': 'a new sign-in path into the tenant',
  'POST /v1/tenants/current/domains': 'a new domain claim, and its DNS verification',
  'POST /v1/tenants/current/domains/{domainId}/verifications': 'a DNS verification',
  'PUT /v1/tenants/current/storage-bucket': 'storage provisioning (new buckets)',
  'POST /v1/tenants/current/storage-reconciliation-jobs': 'a storage reconciliation job',
  'POST /v1/projects': 'a new project',
  'POST /v1/embodiment-profiles': 'a new embodiment profile',
  'POST /v1/training-jobs': 'a training job',
  'POST /v1/model-versions': 'a model version registration',
  'POST /v1/model-versions/{modelVersionId}/upload-urls': 'uploads',
  'PUT /v1/model-versions/{modelVersionId}/object-content': 'an upload',
  'POST /v1/model-versions/{modelVersionId}/validations': 'a validation workflow',
  'POST /v1/model-versions/{modelVersionId}/edge-inference-package': 'an edge-package build',
  'POST /v1/webhook-endpoints': 'a new webhook endpoint',
  'POST /v1/webhook-endpoints/{endpointId}/messages/{messageId}/redeliveries': 'a webhook delivery',
  'POST /v1/webhook-endpoints/{endpointId}/recoveries': 'webhook deliveries of the messages missed',
  'POST /v1/webhook-endpoints/{endpointId}/test-events': 'a webhook delivery',
  // Routes of the branches merged beside this one (issue 37's parts, project members), classified ahead.
  'POST /v1/projects/{projectId}/members': 'a new project member',
  // Issue 39: judged by its service for the tenant approved for, which need not be the session's current one.
  'POST /v1/device/authorizations/approve': 'a new personal access token, for a device (collected by its next poll)',
}

/** Every other mutating operation, with why it is not new work: a test walks /v1/openapi.json and fails on a mutating
 *  operation in neither list, so a new route is classified the day it is added. */
export const NEW_WORK_EXEMPT: Readonly<Record<string, string>> = {
  'POST /v1/tenants': 'creates another tenant, of which the caller becomes owner; nothing of the current one',
  'PATCH /v1/users/me': "the caller's own account",
  'PATCH /v1/users/me/password': "the caller's own account",
  'POST /v1/users/me/other-session-invalidation-requests': 'ends sessions: narrows access',
  'POST /v1/users/me/sso-identities/link-requests': "the caller's own account",
  'DELETE /v1/users/me/sso-identities/{identityId}': "the caller's own account",
  'POST /v1/users/me/mfa/totp': "the caller's own second factor",
  'DELETE /v1/users/me/mfa/totp': "the caller's own second factor",
  'POST /v1/users/me/mfa/totp/verifications': "the caller's own second factor",
  'POST /v1/users/me/webauthn/registration-options': "the caller's own passkeys",
  'POST /v1/users/me/webauthn/registrations': "the caller's own passkeys",
  'DELETE /v1/users/me/webauthn/credentials/{credentialId}': "the caller's own passkeys",
  'POST /v1/users/{userId}/password-reset-requests': 'account recovery of an existing member',
  'POST /v1/sessions': 'signing in: reads and exports need it',
  'POST /v1/sessions/mfa-challenges/confirmations': 'signing in',
  'POST /v1/sessions/passkey-challenges': 'signing in',
  'POST /v1/sessions/current-membership-switches': 'moves the session between tenants the caller already belongs to',
  'DELETE /v1/sessions/current': 'signing out',
  'DELETE /v1/sessions/{sessionId}': 'ends a session: narrows access',
  'POST /v1/sessions/bulk-invalidation-requests': 'ends sessions: narrows access',
  'POST /v1/password-resets': 'account recovery, no tenant',
  'POST /v1/password-resets/confirmations': 'account recovery, no tenant',
  'POST /v1/registration-invitations': 'registers an account, no tenant',
  'POST /v1/registration-invitations/completions': 'registers an account, no tenant',
  'DELETE /v1/api-keys/{apiKeyId}': 'revokes a token: narrows access',
  'POST /v1/api-keys/memberships/{membershipId}/revocations': 'revokes tokens: narrows access',
  'PATCH /v1/tenants/current/auth-policy': 'sign-in policy of existing members: tightening it must stay possible',
  'PATCH /v1/tenants/current/memberships/{membershipId}': 'changes an existing membership (demoting, disabling)',
  'DELETE /v1/tenants/current/memberships/{membershipId}': 'removes a member: narrows access',
  'DELETE /v1/tenant-invitations/{invitationId}': 'revokes an invitation: narrows access',
  'PATCH /v1/tenants/current/sso-connections/{connectionId}': 'changes or disables an existing sign-in path',
  'DELETE /v1/tenants/current/domains/{domainId}': 'removes a domain claim',
  'PATCH /v1/projects/{projectId}': 'edits an existing project',
  'DELETE /v1/projects/{projectId}': 'archives a project',
  'PATCH /v1/embodiment-profiles/{profileId}': 'edits an existing profile',
  'DELETE /v1/embodiment-profiles/{profileId}': 'removes a profile',
  'POST /v1/training-jobs/{trainingJobId}/completion': 'reports the end of a job already started; refusing it would lose its result',
  'POST /v1/edge-inference-packages/{packageId}/runs': 'a robot reporting a run that already happened',
  'PATCH /v1/webhook-endpoints/{endpointId}': 'changes or disables an existing endpoint',
  'DELETE /v1/webhook-endpoints/{endpointId}': 'removes an endpoint',
  'POST /v1/webhook-endpoints/{endpointId}/secret-rotations': 'rotating a secret is security hygiene and must stay possible',
  'POST /v1/tenants/current/audit-log/verifications': 'a read: verifies the audit chain',
  'POST /v1/tenants/current/audit-log/exports': 'an export: exports keep working while offboarding',
  'POST /v1/tenants/current/offboarding': "the offboarding's own operation (a second request answers OFFBOARDING_REQUEST_ALREADY_ACTIVE)",
  'DELETE /v1/tenants/current/offboarding': "the offboarding's own operation: cancelling it reactivates the tenant",
  // Routes of the branches merged beside this one (issue 37's parts, project members, notifications), classified ahead.
  'POST /v1/tenants/current/legal-holds': 'preserves data: a hold must be placeable on a leaving tenant',
  'POST /v1/tenants/current/legal-holds/{holdId}/release': 'releases a hold: changes no work',
  'POST /v1/tenants/current/deletion-jobs': "the offboarding's own operation: the deletion that follows the window",
  'POST /v1/tenants/current/deletion-jobs/{jobId}/retry': "the offboarding's own operation: the deletion that follows the window",
  'DELETE /v1/users/me': "the caller's own account (erasure)",
  'PATCH /v1/projects/{projectId}/members/{userId}': 'changes an existing project membership',
  'DELETE /v1/projects/{projectId}/members/{userId}': 'removes a project member: narrows access',
  'POST /v1/users/me/notifications/read-all': "the caller's own notifications",
  'POST /v1/users/me/notifications/{notificationId}/read': "the caller's own notifications",
  'POST /v1/users/me/notifications/{notificationId}/unread': "the caller's own notifications",
  'POST /v1/users/me/notifications/{notificationId}/archive': "the caller's own notifications",
  'PUT /v1/users/me/notification-preferences': "the caller's own notifications",
  'PATCH /v1/tenants/current/subscription': 'billing itself: resuming or changing the plan is how a block is lifted',
  'POST /v1/tenants/current/subscription/payment-events': 'billing itself: a payment is how an unpaid block is lifted',
  'POST /v1/tenants/current/invoices': 'billing itself: closing an ended period bills work already done',
  // Issue 39: the device authorization grant; its approval is on the list above.
  'POST /v1/device/authorizations': 'a device asking to be signed in: it names no tenant until a person approves it, which is gated',
  'POST /v1/device/tokens': 'collects what a gated approval already decided',
  'POST /v1/device/authorizations/deny': 'refuses a device: narrows access',
}

/** The operations the gate cannot judge from the caller's own membership: their service calls requireGoodStanding
 *  with the tenant the work would land in. */
const CHECKED_BY_SERVICE = new Set(['POST /v1/tenant-invitations/acceptance-records', 'POST /v1/device/authorizations/approve'])

// Elysia names a route by its registered path (`:param`); the lists use the document's (`{param}`).
const routeKey = (key: string) => key.replace(/\{(\w+)\}/g, ':$1')
const LISTED = new Set(Object.keys(NEW_WORK).map(routeKey))
const GATED = new Set(
  Object.keys(NEW_WORK)
    .filter((k) => !CHECKED_BY_SERVICE.has(k))
    .map(routeKey),
)

/** Whether the route (`METHOD` and its registered path) is on the list: it may answer the gate's codes. */
export const startsNewWork = (method: string, route: string): boolean => LISTED.has(`${method} ${route}`)

/** The gate itself, run as the auth macros admit a request (after the credential, before the handler): a caller
 *  acting in a tenant that may not start new work is refused on the listed operations. Its standing was read with
 *  the credential, so this costs no query. */
export function gateNewWork(method: string, route: string, membership: Membership | null): void {
  if (membership && GATED.has(`${method} ${route}`)) requireGoodStanding(membership.standing)
}

/** The sets every listed operation declares besides its own (its refusal codes). */
export const GATE_SETS = NEW_WORK_GATE_SETS

/** The paragraph a listed operation's OpenAPI description gains. */
export const gateDescription = (what: string): string =>
  `Starts new work (${what}): refused with 409 TENANT_OFFBOARDING while the tenant is offboarding or being deleted, and with 400 BILLING_BLOCKED while it is billing-blocked.`
