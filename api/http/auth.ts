import { hmac, safeEqual } from '../platform/crypto'
import { ApiError } from '../platform/errors'
import type { Permission } from '../identity/permissions'
import { requireActiveMembership, requirePermission, resolvePrincipal, type Principal } from '../identity/service'
import type { AppDeps } from './deps'

export const SESSION_COOKIE = 'rcp_session'
export const CSRF_HEADER = 'x-csrf-token'
export const TENANT_HEADER = 'x-tenant-id'

/** 'user': any signed-in principal, no tenant needed. A permission or a list: the current tenant membership
 *  must be usable and grant at least one of them. */
export type AuthRequirement = 'user' | Permission | readonly Permission[]

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim())
  }
  return undefined
}

/** The CSRF token is a MAC of the session id: bound to one session, nothing extra to store. */
export const csrfTokenFor = (key: Buffer, sessionId: string): string => hmac(key, sessionId).toString('base64url')

export function permissionsOf(req: AuthRequirement): Permission[] {
  return req === 'user' ? [] : typeof req === 'string' ? [req] : [...req]
}

export async function authenticate(deps: AppDeps, request: Request, req: AuthRequirement): Promise<Principal> {
  const authz = request.headers.get('authorization')
  let bearer: string | undefined
  if (authz !== null) {
    const m = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(authz.trim())
    if (!m) throw new ApiError('UNAUTHORIZED', 'Authorization must be "Bearer <token>"')
    bearer = m[1]
  }
  const cookie = bearer ? undefined : readCookie(request.headers.get('cookie'), SESSION_COOKIE)
  const principal = await resolvePrincipal({ db: deps.sql, lastUsed: deps.lastUsed }, { bearer, cookie })
  if (principal.viaCookie && !SAFE_METHODS.has(request.method)) {
    const sent = request.headers.get(CSRF_HEADER) ?? ''
    const expected = csrfTokenFor(deps.keys.csrf, principal.credentialId)
    if (!safeEqual(Buffer.from(sent), Buffer.from(expected))) {
      throw new ApiError('CSRF_INVALID', `Cookie-authenticated ${request.method} requests need the ${CSRF_HEADER} header of this session`)
    }
  }
  const perms = permissionsOf(req)
  if (perms.length > 0) {
    requireActiveMembership(principal, request.headers.get(TENANT_HEADER) ?? undefined)
    requirePermission(principal, perms)
  }
  return principal
}
