// The new-work gate (api/http/new-work.ts): a tenant that is not in good standing starts no new work, and every
// mutating operation of the document is either on the gate's list or exempt with a reason.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { patFor, signedUpUser, tenantOwner } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'

const api = useApi()
const MUTATING = new Set(['post', 'put', 'patch', 'delete'])
// The writers of the lifecycle fence before answering; this test writes it with SQL, so it waits the fence itself.
const fence = () => api.deps.pats.fence()
const setLifecycle = async (tenantId: string, lifecycle: string) => {
  await api.sql`update tenants set lifecycle = ${lifecycle} where id = ${tenantId}`
  await fence()
}

describe('the new-work gate', () => {
  test('every mutating operation is on the list (with the gate code, and the sentence in its description) or exempt with a reason', async () => {
    const doc = await (await fetch(`${api.url}/v1/openapi.json`)).json()
    const seen: string[] = []
    let gated = 0
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!MUTATING.has(method)) continue
        const key = `${method.toUpperCase()} ${path}`
        seen.push(key)
        const what = op['x-new-work']
        const why = op['x-new-work-exempt']
        expect({ key, classified: (what === undefined) !== (why === undefined) }).toEqual({ key, classified: true })
        if (what === undefined) {
          expect({ key, why: typeof why === 'string' && why.length > 5 }).toEqual({ key, why: true })
          expect({ key, sets: op['x-error-sets'] }).not.toEqual({ key, sets: expect.arrayContaining(['G409']) })
          continue
        }
        gated++
        expect({ key, sets: op['x-error-sets'] }).toEqual({ key, sets: expect.arrayContaining(['G409']) })
        expect(op.description).toContain(`Starts new work (${what})`)
        expect(op.responses['409'].description).toContain('TENANT_OFFBOARDING')
      }
    }
    expect(gated).toBeGreaterThanOrEqual(20)
    expect(seen.length).toBeGreaterThan(gated)
  })

  test("an offboarding tenant's PAT and session start no new work; reads and exempt operations still answer; another tenant is untouched", async () => {
    const owner = await tenantOwner(api.url)
    const other = await tenantOwner(api.url)
    const pat = owner.client.withBearer((await patFor(owner.client, ['tenant:read', 'tenant:manage', 'apikey:write', 'model:write', 'model:read'])).token)
    const otherPat = other.client.withBearer((await patFor(other.client, ['tenant:manage', 'apikey:write'])).token)
    // Warm this replica's PAT cache, so the refusal below proves the cached entry was evicted, not merely absent.
    expect((await pat.get('/projects')).status).toBe(200)
    expect((await pat.post('/projects', { name: 'Before', slug: 'before' })).status).toBe(201)

    await setLifecycle(owner.tenantId, 'offboarding')
    for (const [client, path, body] of [
      [pat, '/projects', { name: 'After', slug: 'after' }],
      [pat, '/api-keys', { name: 'another', scopes: ['tenant:read'] }],
      [pat, '/webhook-endpoints', { url: 'https://hooks.example.test/in', events: ['model_version.ready'] }],
      [owner.client, '/tenant-invitations', { email: 'new@example.test', role: 'viewer' }],
      [owner.client, '/projects', { name: 'After', slug: 'after' }],
    ] as const) {
      const res = await client.post(path, body)
      expect({ path, status: res.status, code: res.json.code }).toEqual({ path, status: 409, code: 'TENANT_OFFBOARDING' })
    }
    const listed = await pat.get('/projects')
    expect(listed.status).toBe(200)
    expect(listed.json.data.map((p: { slug: string }) => p.slug)).toEqual(['before'])
    const project = listed.json.data[0]
    expect((await pat.call('DELETE', `/projects/${project.id}`)).status).toBe(200)
    expect((await otherPat.post('/projects', { name: 'Other', slug: 'other' })).status).toBe(201)

    await setLifecycle(owner.tenantId, 'active')
    expect((await pat.post('/projects', { name: 'After', slug: 'after' })).status).toBe(201)
  })

  test("accepting an invitation joins nobody to an offboarding tenant, whatever the acceptor's own tenant", async () => {
    const owner = await tenantOwner(api.url)
    const invitee = await signedUpUser(api.url)
    const sent = await owner.client.post('/tenant-invitations', { email: invitee.email, role: 'viewer' })
    expect(sent.status).toBe(201)
    const mail = await waitForMail(invitee.email, { subject: /invited/ })
    const token = decodeURIComponent(/[?&]token=([^\s&]+)/.exec(mail.text)![1]!)

    await setLifecycle(owner.tenantId, 'offboarding')
    const refused = await invitee.client.post('/tenant-invitations/acceptance-records', { token })
    expect([refused.status, refused.json.code]).toEqual([409, 'TENANT_OFFBOARDING'])
    const members = await api.sql`select 1 from memberships where tenant_id = ${owner.tenantId} and user_id = ${invitee.userId}`
    expect(members.length).toBe(0)

    await setLifecycle(owner.tenantId, 'active')
    expect((await invitee.client.post('/tenant-invitations/acceptance-records', { token })).status).toBe(201)
  })
})
