// rcp keys create/list/revoke: personal access tokens of the current tenant. A new key's token is printed once, as
// the API shows it once; the token rcp itself signs in with is never printed.
import { type components, items } from '../ts'
import type { Command } from './context'
import { usage } from './exit'
import { table } from './output'

type Key = components['schemas']['ApiKeySummaryDto']
type Scope = components['schemas']['CreateApiKeyBodyDto']['scopes'][number]

export async function createKey(cmd: Command): Promise<void> {
  const name = cmd.flags.required('name')
  const scopes = cmd.flags
    .required('scopes')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as Scope[]
  const expiresAt = cmd.flags.string('expires-at')
  cmd.flags.done()
  const { rcp } = cmd.client()
  // The scopes are checked by the API (VALIDATION_ERROR, or INVALID_PERMISSION_OVERLAY beyond your own).
  const made = (await rcp.POST('/v1/api-keys', { body: { name, scopes, ...(expiresAt ? { expiresAt } : {}) } })).data.data
  cmd.out.result(made, () =>
    [
      `Created ${made.apiKey.name} (${made.apiKey.id}), scopes ${made.apiKey.scopes.join(' ')}, expires ${made.apiKey.expiresAt}`,
      'Its token, shown this once:',
      made.token,
    ].join('\n'),
  )
}

export async function listKeys(cmd: Command): Promise<void> {
  cmd.flags.done()
  const { rcp } = cmd.client()
  const keys: Key[] = []
  for await (const key of items(rcp, '/v1/api-keys', { params: { query: { pageSize: 100 } } })) keys.push(key)
  cmd.out.result(keys, () =>
    table(
      ['ID', 'NAME', 'PREFIX', 'SCOPES', 'EXPIRES', 'REVOKED'],
      keys.map((k) => [k.id, k.name, k.prefix, k.scopes.join(','), k.expiresAt, k.revokedAt]),
    ),
  )
}

export async function revokeKey(cmd: Command): Promise<void> {
  const [id] = cmd.args
  if (!id) throw usage('rcp keys revoke <key id>')
  cmd.flags.done()
  const { rcp } = cmd.client()
  await rcp.DELETE('/v1/api-keys/{apiKeyId}', { params: { path: { apiKeyId: id } } })
  cmd.out.result({ id, revoked: true }, () => `Revoked ${id}`)
}
