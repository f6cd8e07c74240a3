import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import type { Permission } from '../identity/permissions'
import { csrfTokenMatches } from '../identity/tokens'
import { namedTenantDeleted, resolvePrincipal } from '../credentials/service'
import { refuseOutsideProject, requireActiveMembership, requirePermission, requireSecondFactor, type Principal } from '../identity/service'
import type { HttpDeps } from './deps'

export const SESSION_COOKIE = 'rcp_session'
export const CSRF_HEADER = 'x-csrf-token'
export const TENANT_HEADER = 'x-tenant-id'

/** 'user': any signed-in principal, no tenant needed. 'session': a signed-in session, not a PAT (second factors
 *  and passkeys); 'session:enrolment' also admits a session held at the tenant's MFA-enrolment gate. A permission
 *  or a list: the current tenant membership must be usable and grant at least one of them. `{ project: point }`: a
 *  project-scope point in the project the path names; the macro admits a usable tenant membership and the service
 *  decides the point in that project (api/project-members/service.ts actInProject), where a project membership
 *  can grant what the tenant role does not. `{ project: point, of: 'resource' }`: the same, in the project of the
 *  resource the operation reads or writes (api/project-members/reach.ts; tenant-wide when it has none); a PAT whose
 *  scopes lack the point is refused here, since it holds it nowhere. */
export type AuthRequirement =
  | 'user'
  | 'session'
  | 'session:enrolment'
  | Permission
  | readonly Permission[]
  | { readonly project: Permission; readonly of?: 'resource' }

const PRINCIPAL_ONLY: Record<string, string> = {
  user: 'Any signed-in principal.',
  session: 'A signed-in session (not a personal access token).',
  'session:enrolment': 'A signed-in session (not a personal access token); open while the tenant requires MFA enrolment.',
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim())
  }
  return undefined
}

const inProject = (req: AuthRequirement): req is { readonly project: Permission; readonly of?: 'resource' } => typeof req === 'object' && 'project' in req

export function permissionsOf(req: AuthRequirement): Permission[] {
  if (inProject(req)) return [req.project]
  return typeof req === 'string' ? (req in PRINCIPAL_ONLY ? [] : [req as Permission]) : [...req]
}

// Which 403 codes a requirement can answer, so each operation's description says so.
const DENIALS =
  "Without it: 403 PERMISSION_DENIED when your role does not give it; PERMISSION_NOT_DECLARED when your role would but your token's scopes do not declare it."

export function describeRequirement(req: AuthRequirement): string {
  if (typeof req === 'string' && req in PRINCIPAL_ONLY) return PRINCIPAL_ONLY[req]!
  if (inProject(req) && req.of === 'resource') {
    return (
      `Requires ${req.project} in the project of the resource (from the tenant role, the project role or its overlay); a resource ` +
      `without a project needs ${req.project} from the tenant role, and a project-scoped token reaches only its own project's. ` +
      `A resource out of reach is 404 by id and left out of lists. ${DENIALS} PROJECT_MEMBERSHIP_EXPIRED once your project membership has expired.`
    )
  }
  if (inProject(req)) {
    return `Requires ${req.project} in this project: from the tenant role, the project role or its overlay. ${DENIALS} PROJECT_MEMBERSHIP_EXPIRED once your project membership has expired.`
  }
  return `Requires ${permissionsOf(req).join(' or ')}. ${DENIALS}`
}

// A session of an account that still has an administrator's initial password reaches only what it needs to
// choose its own: the /users family and /api-keys answer INITIAL_PASSWORD_REQUIRED (their A400 has it), every
// other route FORBIDDEN (its sets lack it).
const INITIAL_PASSWORD_ROUTES = new Set(['GET /v1/users/me', 'PATCH /v1/users/me/password', 'DELETE /v1/sessions/current'])
function requireOwnPassword(request: Request): void {
  const path = new URL(request.url).pathname
  if (INITIAL_PASSWORD_ROUTES.has(`${request.method} ${path}`)) return
  const code = /^\/v1\/(users|api-keys)(\/|$)/.test(path) ? 'INITIAL_PASSWORD_REQUIRED' : 'FORBIDDEN'
  throw new ApiError(code, 'Choose your own password first: PATCH /v1/users/me/password')
}

/** A requirement worked out once per route, so a request does no more than compare. */
export interface Admission {
  permissions: readonly Permission[]
  /** The points are decided in the path's project by the service, not here against the tenant-wide set. */
  inProject: boolean
  /** In the resource's project: a PAT's scopes must still declare the point. */
  ofResource: boolean
  sessionOnly: boolean
  enrolment: boolean
}

export const admissionFor = (req: AuthRequirement): Admission => ({
  permissions: Object.freeze(permissionsOf(req)),
  inProject: inProject(req),
  ofResource: inProject(req) && req.of === 'resource',
  sessionOnly: req === 'session' || req === 'session:enrolment',
  enrolment: req === 'session:enrolment',
})

/** Resolves and admits the caller; a PAT in this replica's cache answers synchronously. `tenantNotFound`: the route
 *  declares TENANT_NOT_FOUND (its T404 set), so a tenant header naming a deleted tenant may say so. */
export function authenticate(deps: HttpDeps, request: Request, a: Admission, tenantNotFound = false): Principal | Promise<Principal> {
  const authz = request.headers.get('authorization')
  let bearer: string | undefined
  if (authz !== null) {
    const m = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(authz.trim())
    if (!m) throw new ApiError('UNAUTHORIZED', 'Authorization must be "Bearer <token>"')
    bearer = m[1]
  }
  const cookie = bearer ? undefined : readCookie(request.headers.get('cookie'), SESSION_COOKIE)
  const resolved = resolvePrincipal(deps, { bearer, cookie })
  return resolved instanceof Promise ? resolved.then((p) => admit(deps, request, a, p, tenantNotFound)) : admit(deps, request, a, resolved, tenantNotFound)
}

/** The tenant header names a tenant other than the credential's (or the credential has none): 404 TENANT_NOT_FOUND
 *  when that tenant was deleted (its tombstone, migrations/0090) and the route declares the code; otherwise what
 *  requireActiveMembership answers (TENANT_CONTEXT_MISMATCH, or TENANT_REQUIRED), as for an id that never was one. */
async function refuseNamedTenant(deps: HttpDeps, principal: Principal, named: string): Promise<never> {
  if (isUuid(named) && (await namedTenantDeleted(deps, named))) {
    throw new ApiError('TENANT_NOT_FOUND', 'The tenant the X-Tenant-Id header names has been deleted')
  }
  requireActiveMembership(principal, named)
  throw new ApiError('TENANT_CONTEXT_MISMATCH', 'The X-Tenant-Id header names a different tenant than the credential')
}

function admit(deps: HttpDeps, request: Request, a: Admission, principal: Principal, tenantNotFound: boolean): Principal | Promise<Principal> {
  if (principal.viaCookie && !SAFE_METHODS.has(request.method)) {
    if (!csrfTokenMatches(deps.keys, principal.credentialId, request.headers.get(CSRF_HEADER) ?? '')) {
      throw new ApiError('CSRF_INVALID', `Cookie-authenticated ${request.method} requests need the ${CSRF_HEADER} header of this session`)
    }
  }
  requireSecondFactor(principal, a.enrolment)
  if (a.sessionOnly && principal.credential !== 'session') {
    throw new ApiError('FORBIDDEN', 'Second factors and passkeys are managed from a signed-in session, not with a personal access token')
  }
  if (principal.passwordChangeRequired) requireOwnPassword(request)
  if (a.permissions.length > 0) {
    const named = request.headers.get(TENANT_HEADER) ?? undefined
    if (tenantNotFound && named !== undefined && named !== principal.membership?.tenantId) return refuseNamedTenant(deps, principal, named)
    requireActiveMembership(principal, named)
    if (a.ofResource && principal.grantCeiling !== null && !a.permissions.some((p) => principal.grantCeiling!.includes(p))) {
      requirePermission(principal, a.permissions)
    }
    if (!a.inProject) {
      if (principal.project) refuseOutsideProject(principal, a.permissions)
      requirePermission(principal, a.permissions)
    }
  }
  return principal
}
