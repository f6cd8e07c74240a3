import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { patFor, tenantOwner } from '../support/fixtures'

const api = useApi()
const slug = (tag = 'p') => `${tag}-${crypto.randomUUID().slice(0, 8)}`

describe('projects', () => {
  test('create, read with its ETag, list, change with If-Match, archive (twice), all audited', async () => {
    const owner = await tenantOwner(api.url)
    const c = owner.client
    const created = await c.post('/projects', { name: 'Grasping', slug: 'grasping', description: 'pick and place' })
    expect(created.status).toBe(201)
    expect(created.headers.get('etag')).toBe('"v1"')
    const p = created.json.data
    expect(p).toMatchObject({
      tenantId: owner.tenantId,
      name: 'Grasping',
      slug: 'grasping',
      description: 'pick and place',
      createdBy: owner.userId,
      archived: false,
      archivedAt: null,
      version: 1,
    })

    const got = await c.get(`/projects/${p.id}`)
    expect(got.json.data).toEqual(p)
    expect(got.headers.get('etag')).toBe('"v1"')
    const other = (await c.post('/projects', { name: 'Walking', slug: 'walking' })).json.data
    expect(other.description).toBeNull()
    expect((await c.get('/projects')).json.data.map((r: { id: string }) => r.id)).toEqual([other.id, p.id])

    const changed = await c.patch(`/projects/${p.id}`, { name: 'Grasping v2', description: null }, { 'if-match': '"v1"' })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).toBe('"v2"')
    expect(changed.json.data).toMatchObject({ name: 'Grasping v2', slug: 'grasping', description: null, version: 2 })

    const stale = await c.patch(`/projects/${p.id}`, { slug: 'other' }, { 'if-match': '"v1"' })
    expect([stale.status, stale.json.code]).toEqual([412, 'PRECONDITION_FAILED'])
    expect((await c.get(`/projects/${p.id}`)).json.data.slug).toBe('grasping')

    const archived = await c.delete(`/projects/${p.id}`)
    expect(archived.status).toBe(200)
    expect(archived.json.data).toMatchObject({ id: p.id, archived: true, version: 3 })
    expect(archived.json.data.archivedAt).toBeString()
    const again = await c.delete(`/projects/${p.id}`)
    expect([again.status, again.json.data]).toEqual([200, archived.json.data])
    expect((await c.get(`/projects/${p.id}`)).json.data.archived).toBe(true)

    const ids = async (q: string) => (await c.get(`/projects${q}`)).json.data.map((r: { id: string }) => r.id)
    expect(await ids('?archived=true')).toEqual([p.id])
    expect(await ids('?archived=false')).toEqual([other.id])
    expect(await ids('')).toEqual([other.id, p.id])

    await sealAudit(api.sql)
    const audit = await api.sql<{ action: string; changes: unknown }[]>`
      select action, changes from audit_log where chain = ${owner.tenantId} and target_id = ${p.id} order by seq`
    expect(audit.map((a) => a.action)).toEqual(['project.created', 'project.updated', 'project.archived'])
    expect(audit[1]!.changes).toEqual({
      name: { before: 'Grasping', after: 'Grasping v2' },
      description: { before: 'pick and place', after: null },
    })
  })

  test('an Idempotency-Key replays the first create', async () => {
    const { client } = await tenantOwner(api.url)
    const body = { name: 'Replay', slug: slug() }
    const key = crypto.randomUUID()
    const first = await client.post('/projects', body, { 'idempotency-key': key })
    const second = await client.post('/projects', body, { 'idempotency-key': key })
    expect([first.status, second.status]).toEqual([201, 201])
    expect(second.json.data.id).toBe(first.json.data.id)
    expect((await client.get('/projects')).json.data).toHaveLength(1)
  })

  test('a slug is unique within its tenant (409, on create and on change); another tenant may use it', async () => {
    const a = await tenantOwner(api.url)
    const b = await tenantOwner(api.url)
    const s = slug()
    expect((await a.client.post('/projects', { name: 'One', slug: s })).status).toBe(201)
    const dup = await a.client.post('/projects', { name: 'Two', slug: s })
    expect([dup.status, dup.json.code]).toEqual([409, 'PROJECT_SLUG_CONFLICT'])
    const second = (await a.client.post('/projects', { name: 'Two', slug: slug() })).json.data
    const renamed = await a.client.patch(`/projects/${second.id}`, { slug: s })
    expect([renamed.status, renamed.json.code]).toEqual([409, 'PROJECT_SLUG_CONFLICT'])
    expect((await b.client.post('/projects', { name: 'One', slug: s })).status).toBe(201)
  })

  test('tenant:read reads; writing needs tenant:manage (403)', async () => {
    const owner = await tenantOwner(api.url)
    const p = (await owner.client.post('/projects', { name: 'Seen', slug: slug() })).json.data
    const viewer = owner.client.withBearer((await patFor(owner.client, ['tenant:read'])).token)
    expect((await viewer.get('/projects')).json.data.map((r: { id: string }) => r.id)).toEqual([p.id])
    expect((await viewer.get(`/projects/${p.id}`)).status).toBe(200)
    for (const res of [
      await viewer.post('/projects', { name: 'No', slug: slug() }),
      await viewer.patch(`/projects/${p.id}`, { name: 'No' }),
      await viewer.delete(`/projects/${p.id}`),
    ]) {
      expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_NOT_DECLARED'])
    }
    expect((await owner.client.get(`/projects/${p.id}`)).json.data).toMatchObject({ name: 'Seen', archived: false, version: 1 })
  })

  test("another tenant's project, an unknown id and a non-uuid id are all 404; the list shows none of B's", async () => {
    const a = await tenantOwner(api.url)
    const b = await tenantOwner(api.url)
    const theirs = (await b.client.post('/projects', { name: 'B', slug: slug() })).json.data
    for (const id of [theirs.id, crypto.randomUUID(), 'not-a-uuid']) {
      for (const res of [
        await a.client.get(`/projects/${id}`),
        await a.client.patch(`/projects/${id}`, { name: 'taken' }),
        await a.client.delete(`/projects/${id}`),
      ]) {
        expect([res.status, res.json.code]).toEqual([404, 'NOT_FOUND'])
      }
    }
    expect((await a.client.get('/projects')).json.data).toEqual([])
    expect((await b.client.get(`/projects/${theirs.id}`)).json.data).toMatchObject({ name: 'B', archived: false, version: 1 })
  })

  test('bad input is 400 VALIDATION_ERROR and writes nothing', async () => {
    const { client } = await tenantOwner(api.url)
    const p = (await client.post('/projects', { name: 'Fine', slug: slug() })).json.data
    const bodies = [
      { name: 'x'.repeat(101), slug: slug() },
      { name: '', slug: slug() },
      { name: 'Bad slug', slug: 'Has-Caps' },
      { name: 'Bad slug', slug: '-leading' },
      { name: 'Bad slug', slug: 'a'.repeat(64) },
      { name: 'Long', slug: slug(), description: 'd'.repeat(2001) },
      { name: 'Unknown', slug: slug(), owner: 'me' },
    ]
    for (const body of bodies) {
      const res = await client.post('/projects', body)
      expect([res.status, res.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    }
    const patched = await client.patch(`/projects/${p.id}`, { slug: 'UPPER' })
    expect([patched.status, patched.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    const filter = await client.get('/projects?archived=maybe')
    expect([filter.status, filter.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    expect((await client.get('/projects')).json.data.map((r: { id: string }) => r.id)).toEqual([p.id])
    // The longest slug a DNS label allows is fine.
    expect((await client.post('/projects', { name: 'Max', slug: 'a'.repeat(63) })).status).toBe(201)
  })
})
