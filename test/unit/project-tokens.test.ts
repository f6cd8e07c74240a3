// A project-scoped token's permissions as the PAT cache keeps them: the copy of its project membership's expiry is
// compared with the clock on every use, so a principal cached before expiresAt holds nothing from it after, with no
// change notification needed (api/identity/service.ts currentPermissions).
import { describe, expect, test } from 'bun:test'
import { projectPermissions } from '../../api/identity/permissions'
import { currentPermissions, type Principal } from '../../api/identity/service'

const T = Date.parse('2026-11-27T12:00:00Z')
const principal = (project: Principal['project']): Principal => ({
  credential: 'personal_access_token',
  credentialId: crypto.randomUUID(),
  userId: crypto.randomUUID(),
  label: 'project token',
  membership: {
    id: crypto.randomUUID(),
    tenantId: crypto.randomUUID(),
    role: 'viewer',
    status: 'active',
    expiresAt: null,
    standing: { lifecycle: 'active', billingBlock: [] },
  },
  grantCeiling: ['model:read', 'model:write'],
  permissions: ['model:read', 'model:write'],
  expiresAt: new Date(T + 86_400_000),
  lastUsedAt: null,
  viaCookie: false,
  mfa: 'satisfied',
  authentication: null,
  project,
})

describe('a cached project token', () => {
  test('holds its membership points until expiresAt, and from that millisecond on only what the tenant role gives', () => {
    const p = principal({ id: crypto.randomUUID(), expiresAt: new Date(T), afterExpiry: ['model:read'] })
    expect(currentPermissions(p, T - 1)).toEqual(['model:read', 'model:write'])
    expect(currentPermissions(p, T)).toEqual(['model:read'])
    expect(currentPermissions(p, T + 1000)).toEqual(['model:read'])
  })

  test('a membership without expiry, and a tenant-wide token, keep their permissions', () => {
    expect(currentPermissions(principal({ id: crypto.randomUUID(), expiresAt: null, afterExpiry: [] }), T + 1e12)).toEqual(['model:read', 'model:write'])
    expect(currentPermissions(principal(null), T + 1e12)).toEqual(['model:read', 'model:write'])
  })

  test('what remains after expiry is the tenant role: a viewer reads, a billing admin holds nothing', () => {
    expect(projectPermissions('viewer', null)).toEqual(['model:read'])
    expect(projectPermissions('billing_admin', null)).toEqual([])
    expect(projectPermissions('billing_admin', { role: 'contributor', grant: [], deny: [] })).toEqual(['model:read', 'model:write'])
  })
})
