// Shared by the tenancy tests: a member of an existing tenant, added the way an accepted invitation adds one
// (the invitation flow itself is proven in invitations.test.ts, through the mail).
import type { Sql } from '../../api/platform/db'
import { Client } from '../support/client'
import { signedUpUser } from '../support/fixtures'

export async function memberOf(base: string, sql: Sql, tenantId: string, role: string, email?: string) {
  const u = await signedUpUser(base, email)
  const [m] = await sql<{ id: string }[]>`insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${u.userId}, ${role}) returning id`
  await sql`update sessions set membership_id = ${m!.id} where user_id = ${u.userId}`
  return { ...u, membershipId: m!.id }
}

export const bearer = (base: string, token: string) => new Client(base).withBearer(token)
