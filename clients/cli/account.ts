// rcp login --token, rcp whoami, rcp tenants switch: the credential rcp acts with, and the tenant it acts in.
import { type Credential, saveConfig, storeCredential } from './config'
import type { Command } from './context'
import { CliError, EXIT, usage } from './exit'
import { table } from './output'

/** Reads what a token is (GET /v1/tokens/self) and who holds it (GET /v1/users/me), as a credential to store. */
export async function describeToken(cmd: Command, token: string): Promise<Credential> {
  const rcp = cmd.anonymous(token)
  const self = (await rcp.GET('/v1/tokens/self')).data.data
  const me = (await rcp.GET('/v1/users/me')).data.data
  return {
    tenantId: self.tenantId,
    tenantSlug: me.currentMembership?.tenantSlug ?? null,
    token,
    credentialClass: self.credentialClass,
    expiresAt: self.expiresAt,
  }
}

async function readStdin(): Promise<string> {
  return (await new Response(Bun.stdin.stream()).text()).trim()
}

export async function loginWithToken(cmd: Command, given: string): Promise<void> {
  const token = given === '-' ? await readStdin() : given
  if (!/^rcp_(pat|ses)_[A-Za-z0-9_-]+$/.test(token))
    throw usage('--token takes a personal access token (rcp_pat_…) or a session token (rcp_ses_…); `-` reads it from stdin')
  const credential = await describeToken(cmd, token)
  await storeAndReport(cmd, credential)
}

export async function storeAndReport(cmd: Command, credential: Credential): Promise<void> {
  saveConfig(storeCredential(cmd.config(), cmd.apiUrl(), credential))
  const { token: _never, ...shown } = credential
  cmd.out.result(
    { signedIn: true, ...shown },
    () => `Signed in to ${credential.tenantSlug ?? 'no tenant'} (${credential.credentialClass}, expires ${credential.expiresAt})`,
  )
}

export async function whoami(cmd: Command): Promise<void> {
  const { rcp, credential } = cmd.client()
  const self = (await rcp.GET('/v1/tokens/self')).data.data
  const me = (await rcp.GET('/v1/users/me')).data.data
  const data = {
    apiUrl: cmd.apiUrl(),
    user: { id: me.user.id, email: me.user.email },
    tenant: me.currentMembership ? { id: me.currentMembership.tenantId, slug: me.currentMembership.tenantSlug, role: me.currentMembership.role } : null,
    credentialClass: self.credentialClass,
    credentialId: self.credentialId,
    permissions: self.effectivePermissions,
    expiresAt: self.expiresAt,
    otherTenants: cmd
      .config()
      .credentials.filter((c) => c !== credential)
      .map((c) => c.tenantSlug ?? c.tenantId),
  }
  cmd.out.result(data, () =>
    table(
      ['', ''],
      [
        ['user', data.user.email],
        ['tenant', data.tenant ? `${data.tenant.slug} (${data.tenant.role})` : null],
        ['credential', `${data.credentialClass} ${data.credentialId}`],
        ['permissions', data.permissions.join(' ')],
        ['expires', data.expiresAt],
        ['api', data.apiUrl],
      ],
    )
      .split('\n')
      .slice(1)
      .join('\n'),
  )
}

/** A tenant rcp holds a credential for becomes current; a session token moves to another of the person's memberships
 *  (POST /v1/sessions/current-membership-switches), since a personal access token is bound to its tenant. */
export async function switchTenant(cmd: Command): Promise<void> {
  const [target] = cmd.args
  if (!target) throw usage('rcp tenants switch <slug|id>')
  const config = cmd.config()
  const held = config.credentials.find((c) => c.tenantSlug === target || c.tenantId === target)
  if (held) {
    saveConfig({ ...config, current: held.tenantId ?? '' })
    cmd.out.result(
      { tenantId: held.tenantId, tenantSlug: held.tenantSlug, credentialClass: held.credentialClass },
      () => `Now acting in ${held.tenantSlug ?? held.tenantId}`,
    )
    return
  }
  const { rcp, credential } = cmd.client()
  if (credential.credentialClass !== 'session')
    throw new CliError(
      EXIT.notFound,
      `no credential for tenant ${target}: a personal access token acts in its own tenant only; run \`rcp login\` for that tenant (held: ${config.credentials.map((c) => c.tenantSlug ?? c.tenantId).join(', ') || 'none'})`,
    )
  const me = (await rcp.GET('/v1/users/me')).data.data
  const membership = me.memberships.find((m) => m.tenantSlug === target || m.tenantId === target)
  if (!membership) throw new CliError(EXIT.notFound, `you have no membership in a tenant ${target}`)
  await rcp.POST('/v1/sessions/current-membership-switches', { body: { membershipId: membership.id } })
  const others = config.credentials.filter((c) => c !== credential)
  const moved: Credential = { ...credential, tenantId: membership.tenantId, tenantSlug: membership.tenantSlug }
  saveConfig({ ...config, current: membership.tenantId, credentials: [...others.filter((c) => c.tenantId !== membership.tenantId), moved] })
  cmd.out.result({ tenantId: moved.tenantId, tenantSlug: moved.tenantSlug, credentialClass: moved.credentialClass }, () => `Now acting in ${moved.tenantSlug}`)
}
