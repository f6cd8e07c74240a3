// The permission table (api/identity/permissions.ts) without a server: what a role holds, what a PAT's scopes leave
// of it, and which roles a caller may hand out. The README's copy of the table is test/platform/permission-table.test.ts.
import { describe, expect, test } from 'bun:test'
import {
  effectivePermissions,
  isPermission,
  PERMISSION_CATALOGUE,
  PERMISSIONS,
  PROJECT_PERMISSIONS,
  ROLE_PERMISSIONS,
  ROLES,
  roleWithinReach,
  unmetRequires,
} from '../../api/identity/permissions'

describe('roles', () => {
  test('the owner holds every permission; every other role holds tenant:read and less than the owner', () => {
    expect([...ROLE_PERMISSIONS.owner].sort()).toEqual([...PERMISSIONS].sort())
    for (const r of ROLES.filter((r) => r !== 'owner')) {
      expect({ r, read: ROLE_PERMISSIONS[r].includes('tenant:read'), fewer: ROLE_PERMISSIONS[r].length < PERMISSIONS.length }).toEqual({
        r,
        read: true,
        fewer: true,
      })
    }
  })

  test("billing is the billing admin's and the owner's alone to write; models are not the billing admin's", () => {
    expect(ROLES.filter((r) => ROLE_PERMISSIONS[r].includes('billing:write'))).toEqual(['owner', 'billing_admin'])
    expect(ROLES.filter((r) => ROLE_PERMISSIONS[r].includes('model:read'))).toEqual(['owner', 'admin', 'researcher', 'viewer'])
  })
})

describe('a PAT', () => {
  test("can do what both its scopes and its member's role allow, never more", () => {
    expect(effectivePermissions('viewer', null)).toEqual([...ROLE_PERMISSIONS.viewer])
    expect(effectivePermissions('viewer', ['tenant:read', 'tenant:manage', 'billing:write'])).toEqual(['tenant:read'])
    expect(effectivePermissions('owner', ['model:write', 'nonsense'])).toEqual(['model:write'])
    expect(effectivePermissions('admin', [])).toEqual([])
  })
})

describe('the role ceiling', () => {
  test('a role is within reach when it holds nothing the caller lacks: admin and billing admin cannot mint each other', () => {
    const reach = (held: readonly string[]) => ROLES.filter((r) => roleWithinReach(r, held as never))
    expect(reach(ROLE_PERMISSIONS.owner)).toEqual([...ROLES])
    expect(reach(ROLE_PERMISSIONS.admin)).toEqual(['admin', 'researcher', 'viewer'])
    expect(reach(ROLE_PERMISSIONS.billing_admin)).toEqual(['billing_admin'])
    expect(reach(effectivePermissions('owner', ['tenant:read', 'apikey:read', 'apikey:write', 'model:read']))).toEqual(['viewer'])
  })
})

describe('the catalogue', () => {
  test('every point declares a scope and requires only points of the catalogue, of its own scope or wider', () => {
    for (const p of PERMISSIONS) {
      const { scope, requires } = PERMISSION_CATALOGUE[p]
      expect({ p, scope: ['tenant', 'project'].includes(scope), known: requires.every((r: string) => isPermission(r)) }).toEqual({
        p,
        scope: true,
        known: true,
      })
    }
    expect(PROJECT_PERMISSIONS).toEqual(['model:read', 'model:write', 'project:manage'])
  })

  test('every role is coherent: it holds what each of its points requires', () => {
    for (const r of ROLES) expect({ r, unmet: unmetRequires(ROLE_PERMISSIONS[r]) }).toEqual({ r, unmet: [] })
  })

  test('a set writing what it cannot read is named with what it lacks', () => {
    expect(unmetRequires(['model:write', 'apikey:manage', 'tenant:read'])).toEqual([
      { point: 'model:write', lacks: ['model:read'] },
      { point: 'apikey:manage', lacks: ['apikey:read'] },
    ])
    expect(isPermission('model:delete')).toBe(false)
  })
})
