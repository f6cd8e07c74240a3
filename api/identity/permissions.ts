// The one table from roles to permission points. The OpenAPI description prints it from here; docs/api.md holds a
// copy that test/platform/permission-table.test.ts compares with it.
export const PERMISSIONS = [
  'tenant:read',
  'tenant:manage',
  'apikey:read',
  'apikey:write',
  'apikey:manage',
  'billing:read',
  'billing:write',
  // Additive (issue 13): embodiment profiles, model versions, training jobs and edge packages. Reading them is
  // everyone's but billing's; building and registering them is the researchers' work.
  'model:read',
  'model:write',
  // Additive (issue 37): placing, reading and releasing legal holds. Owners only: a hold is about the tenant's legal
  // exposure, and whom it holds is confidential (an admin may be the held member).
  'legal_hold:manage',
] as const
export type Permission = (typeof PERMISSIONS)[number]

export const ROLES = ['owner', 'admin', 'researcher', 'billing_admin', 'viewer'] as const
export type Role = (typeof ROLES)[number]

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: ['tenant:read', 'tenant:manage', 'apikey:read', 'apikey:write', 'apikey:manage', 'billing:read', 'model:read', 'model:write'],
  researcher: ['tenant:read', 'apikey:read', 'apikey:write', 'model:read', 'model:write'],
  billing_admin: ['tenant:read', 'apikey:read', 'apikey:write', 'billing:read', 'billing:write'],
  viewer: ['tenant:read', 'apikey:read', 'apikey:write', 'model:read'],
}

/** A PAT can never do more than its scopes, nor more than its member's role allows today. */
export function effectivePermissions(role: Role, scopes: readonly string[] | null): Permission[] {
  const granted = ROLE_PERMISSIONS[role]
  return scopes === null ? [...granted] : granted.filter((p) => scopes.includes(p))
}

/** The role ceiling, by permission points rather than a linear rank (admin and billing_admin are incomparable):
 *  a role is within reach of a caller when it carries nothing the caller does not hold now. For a PAT `held` is
 *  its effective permissions, so a narrowly scoped token cannot mint a broader member. */
export const roleWithinReach = (role: Role, held: readonly Permission[]): boolean => ROLE_PERMISSIONS[role].every((p) => held.includes(p))

export function permissionTableMarkdown(): string {
  const head = `| role | ${PERMISSIONS.join(' | ')} |\n|---|${PERMISSIONS.map(() => '---').join('|')}|`
  const rows = ROLES.map((r) => `| ${r} | ${PERMISSIONS.map((p) => (ROLE_PERMISSIONS[r].includes(p) ? 'yes' : '')).join(' | ')} |`)
  return [head, ...rows].join('\n')
}
