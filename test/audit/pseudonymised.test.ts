// Entries outlive an erased person with their personal part blanked, and the chain still verifies (migrations/0091):
// the hash covers the personal part's digest, not the label, address and user agent themselves. The attacker's view
// too: a label rewritten in place, or a personal part blanked by hand, is caught by the verification.
import { describe, expect, test } from 'bun:test'
import { exportBatch, verifyChain } from '../../api/audit/queries'
import { toExportLine } from '../../api/audit-exports/service'
import { linkHash, personalPartOk } from '../../api/audit/canonical'
import { useApi } from '../support/api'
import { auditWindow, sealAudit } from '../support/audit'
import { patFor, tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi()
const DAY = 86_400_000
const around = () => [new Date(Date.now() - DAY), new Date(Date.now() + DAY)] as const

describe('audit entries after an erasure', () => {
  test("the erased person's address is nowhere in the trail, every chain still verifies, and the export's links recompute", async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    // Entries the member acts in, in the tenant's chain and their own: a token made and revoked, a verification, a
    // display name (in changes); and one that names them by address: another tenant's invitation (in details).
    const name = `Ada ${crypto.randomUUID().slice(0, 8)}`
    expect((await member.client.patch('/users/me', { displayName: name })).status).toBe(200)
    const inviter = await tenantOwner(api.url)
    expect((await inviter.client.post('/tenant-invitations', { email: member.email, role: 'viewer' })).status).toBe(201)
    const pat = await patFor(member.client, ['tenant:read'])
    expect((await member.client.delete(`/api-keys/${pat.id}`)).status).toBe(200)
    expect((await member.client.post('/tenants/current/audit-log/verifications', { from: around()[0], to: around()[1] })).status).toBe(200)
    await sealAudit(api.sql)
    const acted = await api.sql<{ n: number }[]>`select count(*)::int as n from audit_log where actor_label = ${member.email}`
    expect(acted[0]!.n).toBeGreaterThan(2)
    const named = await api.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log a where position(${name} in a::text) > 0 or details ->> 'email' = ${member.email}`
    expect(named[0]!.n).toBe(2)

    expect((await member.client.delete('/users/me')).status).toBe(200)
    await sealAudit(api.sql)

    const mentions = await api.sql<{ email: number; name: number }[]>`
      select count(*) filter (where position(lower(${member.email}) in lower(a::text)) > 0)::int as email,
             count(*) filter (where position(${name} in a::text) > 0)::int as name
        from audit_log a`
    expect(mentions[0]).toEqual({ email: 0, name: 0 })
    const invited = await verifyChain(api.sql, inviter.tenantId, ...around())
    expect(invited.first_broken_seq).toBeNull()
    const blanked = await api.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log
       where actor_id = ${member.userId} and personal_nonce is null and actor_label is null and ip is null and user_agent is null`
    expect(blanked[0]!.n).toBeGreaterThanOrEqual(acted[0]!.n)
    // The API shows a blanked entry as it is stored: the actor's id, no label, no address. The erasure's own entry
    // (membership.removed) comes after the blanking, under the pseudonym.
    const listed = await owner.client.get(`/tenants/current/audit-log?${auditWindow()}&actorId=${member.userId}`)
    expect(listed.status).toBe(200)
    const labels = listed.json.data.map((e: { action: string; actor: { label: string | null }; ip: string | null }) => [e.action, e.actor.label, e.ip])
    const pseudonym = `erased-${member.userId.replaceAll('-', '')}@erased.invalid`
    expect(labels.filter(([, label]: unknown[]) => label !== null).map(([action, label]: unknown[]) => [action, label])).toEqual([
      ['membership.removed', pseudonym],
    ])
    expect(labels.filter(([, label, ip]: unknown[]) => label === null && ip === null).length).toBe(2) // the token made and revoked
    const check = await verifyChain(api.sql, owner.tenantId, ...around())
    expect({ broken: check.first_broken_seq, verified: check.verified > 3 }).toEqual({ broken: null, verified: true })

    // The customer's verifier (api/audit/canonical.ts) recomputes every link of the tenant's chain from the export's
    // lines, blanked ones included.
    const rows = await exportBatch(api.sql, owner.tenantId, ...around(), 0, 10_000)
    const lines = rows.map(toExportLine)
    expect(lines.some((l) => l.personalDigest && !l.personalNonce)).toBe(true)
    for (const l of lines)
      expect({ seq: l.seq, link: linkHash(l.prevHash, l) === l.hash, part: personalPartOk(l) }).toEqual({ seq: l.seq, link: true, part: true })
  })

  test('a label rewritten in place, or a personal part blanked by hand, breaks the verification; other columns stay frozen', async () => {
    const owner = await tenantOwner(api.url)
    await patFor(owner.client, ['tenant:read'])
    await sealAudit(api.sql)
    const [entry] = await api.sql<{ seq: number }[]>`
      select seq from audit_log where chain = ${owner.tenantId} and actor_label = ${owner.email} order by seq limit 1`
    // Only audit_erase_personal may update, and only the personal part to nulls.
    const refused = await api.sql
      .begin(async (tx) => {
        await tx`select set_config('rcp.audit_erase', 'on', true)`
        await tx`update audit_log set action = 'forged' where chain = ${owner.tenantId} and seq = ${entry!.seq}`
      })
      .then(
        () => 'updated',
        (e: Error) => e.message,
      )
    expect(refused).toContain('append-only')
    // An operator with the table's owner role can still disable the trigger: the verification is what catches it.
    await api.sql.begin(async (tx) => {
      await tx`alter table audit_log disable trigger audit_log_no_update`
      await tx`update audit_log set actor_label = 'someone-else@example.test' where chain = ${owner.tenantId} and seq = ${entry!.seq}`
      await tx`alter table audit_log enable trigger audit_log_no_update`
    })
    const check = await verifyChain(api.sql, owner.tenantId, ...around())
    expect(check.first_broken_seq).toBe(entry!.seq)

    // A part blanked by hand but not whole (the nonce kept, so the digest no longer matches) is caught the same way.
    const other = await tenantOwner(api.url)
    await sealAudit(api.sql)
    const [first] = await api.sql<{ seq: number }[]>`
      select seq from audit_log where chain = ${other.tenantId} and actor_label = ${other.email} order by seq limit 1`
    await api.sql.begin(async (tx) => {
      await tx`alter table audit_log disable trigger audit_log_no_update`
      await tx`update audit_log set ip = null where chain = ${other.tenantId} and seq = ${first!.seq}`
      await tx`alter table audit_log enable trigger audit_log_no_update`
    })
    expect((await verifyChain(api.sql, other.tenantId, ...around())).first_broken_seq).toBe(first!.seq)
  })
})
