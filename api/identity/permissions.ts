// The one catalogue of permission points and the one table from roles to them. The OpenAPI description prints both
// from here; docs/api.md holds copies that test/platform/permission-table.test.ts compares with them.

/** Where a point applies: `tenant` points act on the tenant as a whole (its members, keys, billing); `project` points
 *  act on work that a project may hold, so a project membership can grant or deny them inside one project. */
export type PermissionScope = 'tenant' | 'project'

export interface PermissionPoint {
  scope: PermissionScope
  /** Points that must be held with this one: a set holding it without them is incoherent (writing what one cannot
   *  read), so an overlay that would leave one unmet is refused. */
  requires: readonly string[]
}

export const PERMISSION_CATALOGUE = {
  'tenant:read': { scope: 'tenant', requires: [] },
  'tenant:manage': { scope: 'tenant', requires: ['tenant:read'] },
  'apikey:read': { scope: 'tenant', requires: [] },
  'apikey:write': { scope: 'tenant', requires: ['apikey:read'] },
  'apikey:manage': { scope: 'tenant', requires: ['apikey:read'] },
  'billing:read': { scope: 'tenant', requires: [] },
  'billing:write': { scope: 'tenant', requires: ['billing:read'] },
  // Additive (issue 13): embodiment profiles, model versions, training jobs and edge packages. Reading them is
  // everyone's but billing's; building and registering them is the researchers' work.
  'model:read': { scope: 'project', requires: [] },
  'model:write': { scope: 'project', requires: ['model:read'] },
  // Additive (issue 36): adding, changing and removing a project's members. Held tenant-wide by owners and admins,
  // inside one project by its maintainers.
  'project:manage': { scope: 'project', requires: ['model:read'] },
  // Additive (issue 37): placing, reading and releasing legal holds. Owners only: a hold is about the tenant's legal
  // exposure, and whom it holds is confidential (an admin may be the held member).
  'legal_hold:manage': { scope: 'tenant', requires: [] },
} as const satisfies Record<string, PermissionPoint>

export type Permission = keyof typeof PERMISSION_CATALOGUE
export const PERMISSIONS = Object.keys(PERMISSION_CATALOGUE) as readonly Permission[] as readonly [Permission, ...Permission[]]
export const PROJECT_PERMISSIONS: readonly Permission[] = PERMISSIONS.filter((p) => PERMISSION_CATALOGUE[p].scope === 'project')
export const isPermission = (p: string): p is Permission => Object.hasOwn(PERMISSION_CATALOGUE, p)
export const scopeOf = (p: Permission): PermissionScope => PERMISSION_CATALOGUE[p].scope
export const requiresOf = (p: Permission): readonly Permission[] => PERMISSION_CATALOGUE[p].requires as readonly Permission[]

/** The points of `held` whose `requires` are not all in `held`, each with what it lacks. */
export function unmetRequires(held: readonly Permission[]): { point: Permission; lacks: Permission[] }[] {
  const out: { point: Permission; lacks: Permission[] }[] = []
  for (const point of held) {
    const lacks = requiresOf(point).filter((r) => !held.includes(r))
    if (lacks.length > 0) out.push({ point, lacks })
  }
  return out
}

export const ROLES = ['owner', 'admin', 'researcher', 'billing_admin', 'viewer'] as const
export type Role = (typeof ROLES)[number]

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: ['tenant:read', 'tenant:manage', 'apikey:read', 'apikey:write', 'apikey:manage', 'billing:read', 'model:read', 'model:write', 'project:manage'],
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

/** The catalogue as a table: each point's scope and what it requires. */
export function permissionCatalogueMarkdown(): string {
  const rows = PERMISSIONS.map((p) => `| ${p} | ${scopeOf(p)} | ${requiresOf(p).join(', ')} |`)
  return ['| point | scope | requires |', '|---|---|---|', ...rows].join('\n')
}

// ── Inside a project ─────────────────────────────────────────────────────────────────────────────────────────

/** Project roles, each a set of project-scope points: reading a project's work, doing it, and managing who does. */
export const PROJECT_ROLES = ['maintainer', 'contributor', 'reader'] as const
export type ProjectRole = (typeof PROJECT_ROLES)[number]

export const PROJECT_ROLE_PERMISSIONS: Record<ProjectRole, readonly Permission[]> = {
  maintainer: ['model:read', 'model:write', 'project:manage'],
  contributor: ['model:read', 'model:write'],
  reader: ['model:read'],
}

/** A project membership as the permission rules read it. */
export interface ProjectGrant {
  role: ProjectRole
  grant: readonly Permission[]
  deny: readonly Permission[]
}

/** The project-scope points a tenant role carries into every project of its tenant. */
export const tenantProjectPermissions = (role: Role): Permission[] => ROLE_PERMISSIONS[role].filter((p) => PERMISSION_CATALOGUE[p].scope === 'project')

/** Tenant roles that manage the tenant keep their reach in every project: no project overlay narrows it (they could
 *  lift any deny themselves, so honouring one would only pretend). */
const keepsTenantReach = (role: Role): boolean => ROLE_PERMISSIONS[role].includes('tenant:manage')

/** What a tenant member holds in one project: (tenant role's project-scope points ∪ project role's ∪ grant) − deny.
 *  `member` null (none, or expired) leaves the tenant role's points. Order follows the catalogue. */
export function projectPermissions(tenantRole: Role, member: ProjectGrant | null): Permission[] {
  const base = tenantProjectPermissions(tenantRole)
  if (!member) return base
  const held = new Set<Permission>([...base, ...PROJECT_ROLE_PERMISSIONS[member.role], ...member.grant])
  if (!keepsTenantReach(tenantRole)) for (const p of member.deny) held.delete(p)
  return PERMISSIONS.filter((p) => held.has(p))
}

export function projectRoleTableMarkdown(): string {
  const head = `| project role | ${PROJECT_PERMISSIONS.join(' | ')} |\n|---|${PROJECT_PERMISSIONS.map(() => '---').join('|')}|`
  const rows = PROJECT_ROLES.map((r) => `| ${r} | ${PROJECT_PERMISSIONS.map((p) => (PROJECT_ROLE_PERMISSIONS[r].includes(p) ? 'yes' : '')).join(' | ')} |`)
  return [head, ...rows].join('\n')
}
