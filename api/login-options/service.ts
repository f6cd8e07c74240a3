import { passkeysConfigured } from '../mfa/webauthn'
import { findAuthPoliciesForDomain } from '../auth-policy/queries'
import { domainOfEmail } from '../platform/email'
import { findTenantsVerifyingDomain } from '../domains/queries'
import { findEnabledConnectionsForDomain } from '../sso/queries'
import type { Db } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'

export interface SsoOption {
  connectionId: string
  name: string
}

/** The enabled SSO connections whose email domains include `domain`, of the tenants that verified it. */
export async function ssoConnectionsForDomain(db: Db, domain: string, verifiedBy: string[]): Promise<SsoOption[]> {
  return (await findEnabledConnectionsForDomain(db, domain)).filter((c) => verifiedBy.includes(c.tenant_id)).map((c) => ({ connectionId: c.id, name: c.name }))
}

/** GET /auth/login-options: what the sign-in page should offer. It depends on the email's domain only (the tenants
 *  that claim it), never on whether an account exists, so it reveals nothing about accounts. Only a tenant that
 *  proved control of the domain (api/domains) counts: any tenant can list any domain, which proves nothing. */
export async function loginOptions({ sql: db, config }: Pick<ServiceDeps, 'sql' | 'config'>, email: string | undefined) {
  const domain = email?.includes('@') ? domainOfEmail(email) : undefined
  const verifiedBy = domain ? await findTenantsVerifyingDomain(db, domain) : []
  const [claims, sso] = domain ? await Promise.all([findAuthPoliciesForDomain(db, domain), ssoConnectionsForDomain(db, domain, verifiedBy)]) : [[], []]
  const policies = claims.filter((p) => verifiedBy.includes(p.tenant_id))
  const ssoEnforced = policies.some((p) => p.sso_enforced)
  const allows = (method: string) => policies.every((p) => p.allowed_sign_in_methods.includes(method))
  return {
    password: !ssoEnforced && allows('password'),
    passkey: passkeysConfigured(config) && !ssoEnforced && allows('passkey'),
    ssoEnforced,
    sso,
  }
}
