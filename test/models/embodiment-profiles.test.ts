import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
import { modelWriter } from './support'

const api = useApi()

const camera = { name: 'observation.images.top', dtype: 'uint8', shape: [224, 224, 3], kind: 'image' }
const state = { name: 'observation.state', dtype: 'float32', shape: [14], kind: 'state' }
const actions = { name: 'action', dtype: 'float32', shape: [50, 14], kind: 'action' }
const profile = (name = `aloha ${crypto.randomUUID()}`) => ({
  name,
  robotType: 'aloha',
  controlRateHz: 50,
  observationFeatures: [camera, state],
  actionFeatures: [actions],
})

describe('embodiment profiles', () => {
  test('create, read with its ETag, list, change with If-Match, delete', async () => {
    const { pat } = await modelWriter(api.url)
    const created = await pat.post('/embodiment-profiles', profile('aloha left'))
    expect(created.status).toBe(201)
    expect(created.headers.get('etag')).toBe('"v1"')
    const p = created.json.data
    expect(p).toMatchObject({
      name: 'aloha left',
      robotType: 'aloha',
      controlRateHz: 50,
      observationFeatures: [camera, state],
      actionFeatures: [actions],
      version: 1,
    })

    const got = await pat.get(`/embodiment-profiles/${p.id}`)
    expect(got.json.data).toEqual(p)
    expect(got.headers.get('etag')).toBe('"v1"')
    expect((await pat.get('/embodiment-profiles')).json.data.map((r: { id: string }) => r.id)).toEqual([p.id])

    const changed = await pat.patch(`/embodiment-profiles/${p.id}`, { controlRateHz: 30 }, { 'if-match': '"v1"' })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).toBe('"v2"')
    expect(changed.json.data).toMatchObject({ controlRateHz: 30, name: 'aloha left', observationFeatures: [camera, state], version: 2 })

    // A stale ETag writes nothing; a malformed one is refused; none at all is accepted.
    const stale = await pat.patch(`/embodiment-profiles/${p.id}`, { controlRateHz: 10 }, { 'if-match': '"v1"' })
    expect([stale.status, stale.json.code]).toEqual([412, 'PRECONDITION_FAILED'])
    const bad = await pat.patch(`/embodiment-profiles/${p.id}`, { controlRateHz: 10 }, { 'if-match': 'W/"v2"' })
    expect([bad.status, bad.json.code]).toEqual([400, 'IF_MATCH_INVALID'])
    expect((await pat.get(`/embodiment-profiles/${p.id}`)).json.data.controlRateHz).toBe(30)
    expect((await pat.patch(`/embodiment-profiles/${p.id}`, { robotType: 'aloha2' })).headers.get('etag')).toBe('"v3"')

    expect((await pat.delete(`/embodiment-profiles/${p.id}`)).status).toBe(204)
    const gone = await pat.get(`/embodiment-profiles/${p.id}`)
    expect([gone.status, gone.json.code]).toEqual([404, 'NOT_FOUND'])
    expect((await pat.delete(`/embodiment-profiles/${p.id}`)).status).toBe(404)
  })

  test('names are unique per tenant (409), in another tenant the same name is fine', async () => {
    const a = await modelWriter(api.url)
    const b = await modelWriter(api.url)
    expect((await a.pat.post('/embodiment-profiles', profile('so100'))).status).toBe(201)
    const again = await a.pat.post('/embodiment-profiles', profile('so100'))
    expect([again.status, again.json.code]).toEqual([409, 'EMBODIMENT_PROFILE_NAME_CONFLICT'])
    expect((await b.pat.post('/embodiment-profiles', profile('so100'))).status).toBe(201)
    const other = (await a.pat.post('/embodiment-profiles', profile('so101'))).json.data
    const rename = await a.pat.patch(`/embodiment-profiles/${other.id}`, { name: 'so100' })
    expect([rename.status, rename.json.code]).toEqual([409, 'EMBODIMENT_PROFILE_NAME_CONFLICT'])
  })

  test('features and rates outside their bounds are refused with the field named', async () => {
    const { pat } = await modelWriter(api.url)
    const cases: [Record<string, unknown>, string][] = [
      [{ controlRateHz: 0 }, 'body.controlRateHz'],
      [{ controlRateHz: 1000.5 }, 'body.controlRateHz'],
      [{ observationFeatures: [] }, 'body.observationFeatures'],
      [{ actionFeatures: Array.from({ length: 65 }, (_, i) => ({ ...actions, name: `a${i}` })) }, 'body.actionFeatures'],
      [{ observationFeatures: [state, { ...state }] }, 'body.observationFeatures.1.name'],
      [{ observationFeatures: [{ ...camera, dtype: 'float32' }] }, 'body.observationFeatures.0.kind'],
      [{ observationFeatures: [{ ...camera, shape: [224, 224] }] }, 'body.observationFeatures.0.kind'],
      [{ actionFeatures: [{ ...actions, shape: [1, 2, 3, 4, 5, 6, 7] }] }, 'body.actionFeatures.0.shape'],
      [{ actionFeatures: [{ ...actions, shape: [0] }] }, 'body.actionFeatures.0.shape.0'],
      [{ actionFeatures: [{ ...actions, dtype: 'float16' }] }, 'body.actionFeatures.0.dtype'],
    ]
    for (const [change, path] of cases) {
      const res = await pat.post('/embodiment-profiles', { ...profile(), ...change })
      expect({ change, status: res.status, code: res.json.code }).toEqual({ change, status: 400, code: 'VALIDATION_ERROR' })
      expect({ change, paths: res.json.errors.map((e: { path: string }) => e.path) }).toEqual({ change, paths: expect.arrayContaining([path]) })
    }
    expect((await pat.post('/embodiment-profiles', { ...profile(), controlRateHz: 1000 })).status).toBe(201)
  })

  test('a profile something references with ON DELETE RESTRICT (as edge packages do) is refused: 409 EMBODIMENT_PROFILE_IN_USE', async () => {
    const { pat } = await modelWriter(api.url)
    const p = (await pat.post('/embodiment-profiles', profile())).json.data
    // The packages table is another migration's; a table with the same kind of reference stands in for it here.
    const table = `profile_users_${crypto.randomUUID().replaceAll('-', '')}`
    await api.sql`create table ${api.sql(table)} (profile_id uuid not null references embodiment_profiles (id) on delete restrict)`
    try {
      await api.sql`insert into ${api.sql(table)} values (${p.id})`
      const refused = await pat.delete(`/embodiment-profiles/${p.id}`)
      expect([refused.status, refused.json.code]).toEqual([409, 'EMBODIMENT_PROFILE_IN_USE'])
      expect((await pat.get(`/embodiment-profiles/${p.id}`)).status).toBe(200)
      await api.sql`delete from ${api.sql(table)}`
      expect((await pat.delete(`/embodiment-profiles/${p.id}`)).status).toBe(204)
    } finally {
      await api.sql`drop table ${api.sql(table)}`
    }
  })

  test("another tenant's token gets 404 on every id route and sees nothing in the list", async () => {
    const a = await modelWriter(api.url)
    const p = (await a.pat.post('/embodiment-profiles', profile())).json.data
    const b = await modelWriter(api.url)
    expect((await b.pat.get('/embodiment-profiles')).json.data).toEqual([])
    for (const res of [
      await b.pat.get(`/embodiment-profiles/${p.id}`),
      await b.pat.patch(`/embodiment-profiles/${p.id}`, { robotType: 'stolen' }),
      await b.pat.patch(`/embodiment-profiles/${p.id}`, { robotType: 'stolen' }, { 'if-match': '"v1"' }),
      await b.pat.delete(`/embodiment-profiles/${p.id}`),
    ])
      expect([res.status, res.json?.code]).toEqual([404, 'NOT_FOUND'])
    expect((await a.pat.get(`/embodiment-profiles/${p.id}`)).json.data).toEqual(p)
  })

  test('reading needs model:read, writing model:write', async () => {
    const owner = await tenantOwner(api.url)
    const reader = owner.client.withBearer((await patFor(owner.client, ['model:read'])).token)
    const denied = await reader.post('/embodiment-profiles', profile())
    expect([denied.status, denied.json.code]).toEqual([403, 'PERMISSION_NOT_DECLARED'])
    expect((await reader.get('/embodiment-profiles')).status).toBe(200)
    const none = owner.client.withBearer((await patFor(owner.client, ['tenant:read'])).token)
    expect((await none.get('/embodiment-profiles')).status).toBe(403)
  })
})
