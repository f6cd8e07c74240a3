// What a project scopes (issue 36): embodiment profiles, training jobs, model versions and edge packages may belong to
// a project, and only those who may act in it reach them. The attacker's cases come first.
import { describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { useApiAndTemporal } from '../storage/helpers'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { FEATURES, makeProfile, makeVersion, modelTenant } from '../edge-packages/helpers'
import { bearer, memberOf } from '../tenancy/members'
import { settled, uploadThroughUrls } from '../models/support'

const env = useApiAndTemporal()
const checkpoint = { kind: 'imported_checkpoint', path: 'checkpoints/policy.onnx' }
const ids = (res: { json: any }) => (res.json.data as { id: string }[]).map((r) => r.id).sort()
const codeOf = (res: { status: number; json: any }) => `${res.status} ${res.json?.code}`

/** A tenant with storage, projects a and b, a billing admin who is a contributor of a only (their tenant role holds no
 *  model point, so whatever they reach, project a gives), and a version in each project and one tenant-wide. */
async function setting() {
  const t = await modelTenant(env.api.url)
  const project = async (n: string) => (await t.client.post('/projects', { name: n, slug: `${n}-${randomUUID()}` })).json.data.id as string
  const [a, b] = [await project('a'), await project('b')]
  const member = await memberOf(env.api.url, env.api.sql, t.tenantId, 'billing_admin')
  expect((await t.client.post(`/projects/${a}/members`, { userId: member.userId, role: 'contributor' })).status).toBe(201)
  const version = async (projectId?: string) => {
    const res = await t.models.post('/model-versions', { name: `v-${projectId ?? 'tenant'}`, format: 'onnx', source: checkpoint, projectId })
    expect(res.status).toBe(201)
    return res.json.data.id as string
  }
  return { t, a, b, member, va: await version(a), vb: await version(b), vt: await version() }
}

/** A ready version (its objects really in MinIO) of `projectId`, and a package built from it by the owner's token. */
async function packageOf(t: Awaited<ReturnType<typeof modelTenant>>, projectId: string) {
  const profileId = await makeProfile(env.api.sql, t.tenantId)
  const v = await makeVersion(env.api.sql, t.tenantId, t.general, { 'policy.onnx': Buffer.from('weights') })
  await env.api.sql`update model_versions set project_id = ${projectId} where id = ${v.id}`
  const res = await t.models.post(`/model-versions/${v.id}/edge-inference-package`, { embodimentProfileId: profileId, mode: 'local', useFakeTransport: true })
  expect(res.status).toBe(201)
  return { versionId: v.id, profileId, pkg: res.json.data }
}

const RUN = {
  stepsDone: 5,
  latencyMs: { p50: 12.5, p99: 40 },
  contractViolations: 0,
  exitReason: 'completed',
  violations: [],
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: '2026-01-01T00:00:05Z',
}

describe("the attacker's view", () => {
  test("a member of project a reads project b's model version neither by id nor in a list", async () => {
    const { a, b, member, va, vb, vt } = await setting()
    const get = await member.client.get(`/model-versions/${vb}`)
    expect(codeOf(get)).toBe('404 MODEL_VERSION_NOT_FOUND')
    expect((await member.client.get(`/model-versions/${va}`)).json.data.projectId).toBe(a)
    // The list holds what they reach: project a's, not b's, and no tenant-wide one (their tenant role reads no models).
    expect(ids(await member.client.get('/model-versions'))).toEqual([va])
    expect(ids(await member.client.get(`/model-versions?projectId=${b}`))).toEqual([])
    // A tenant-wide version keeps the tenant's rules: their role does not give model:read.
    expect(codeOf(await member.client.get(`/model-versions/${vt}`))).toBe('403 PERMISSION_DENIED')
    // Writing to b is as absent: uploads, validation.
    expect(codeOf(await member.client.post(`/model-versions/${vb}/upload-urls`))).toBe('404 MODEL_VERSION_NOT_FOUND')
    expect(codeOf(await member.client.post(`/model-versions/${vb}/validations`))).toBe('404 MODEL_VERSION_NOT_FOUND')
  })

  test("a project-a token reads and writes none of project b's package; a package is its version's project's", async () => {
    const { t, a, b, member } = await setting()
    const built = await packageOf(t, b)
    expect(built.pkg.projectId).toBe(b)
    const [row] = await env.api.sql`select project_id from edge_packages where id = ${built.pkg.id}`
    expect(row!.project_id).toBe(b)
    const token = bearer(env.api.url, (await patFor(member.client, ['model:read', 'model:write'], { projectId: a })).token)
    expect(codeOf(await token.get(`/edge-inference-packages/${built.pkg.id}`))).toBe('404 NOT_FOUND')
    expect(codeOf(await token.get(`/edge-inference-packages/${built.pkg.id}/runs`))).toBe('404 NOT_FOUND')
    expect(codeOf(await token.post(`/edge-inference-packages/${built.pkg.id}/runs`, RUN))).toBe('404 NOT_FOUND')
    expect(codeOf(await token.post(`/model-versions/${built.versionId}/edge-inference-package`, { embodimentProfileId: built.profileId, mode: 'local' }))).toBe(
      '404 MODEL_VERSION_NOT_FOUND',
    )
    expect(ids(await token.get('/edge-inference-packages'))).toEqual([])
    expect(ids(await token.get(`/edge-inference-packages?projectId=${b}`))).toEqual([])
    const [runs] = await env.api.sql`select count(*)::int as n from edge_package_runs where package_id = ${built.pkg.id}`
    expect(runs!.n).toBe(0)
    // The owner reaches it, and the project filter finds it.
    expect(ids(await t.models.get(`/edge-inference-packages?projectId=${b}`))).toEqual([built.pkg.id])
  })

  test('a tenant viewer reads every project (their role carries model:read) but writes in none; a deny hides it', async () => {
    const { t, a, b, va, vb, vt } = await setting()
    const viewer = await memberOf(env.api.url, env.api.sql, t.tenantId, 'viewer')
    expect(ids(await viewer.client.get('/model-versions'))).toEqual([va, vb, vt].sort())
    const write = await viewer.client.post('/model-versions', { name: 'x', format: 'onnx', source: checkpoint, projectId: b })
    expect(codeOf(write)).toBe('403 PERMISSION_DENIED')
    expect(codeOf(await viewer.client.post(`/model-versions/${vb}/upload-urls`))).toBe('403 PERMISSION_DENIED')
    // Made a reader of b with model:read denied, the viewer holds nothing in b: b's version is gone from sight.
    const denied = await t.client.post(`/projects/${b}/members`, { userId: viewer.userId, role: 'reader', overlay: { grant: [], deny: ['model:read'] } })
    expect(denied.status).toBe(201)
    expect(codeOf(await viewer.client.get(`/model-versions/${vb}`))).toBe('404 MODEL_VERSION_NOT_FOUND')
    expect(ids(await viewer.client.get('/model-versions'))).toEqual([va, vt].sort())
    expect(ids(await viewer.client.get(`/model-versions?projectId=${b}`))).toEqual([])
    // A contributor of a writes there, and there only.
    expect((await t.client.post(`/projects/${a}/members`, { userId: viewer.userId, role: 'contributor' })).status).toBe(201)
    const made = await viewer.client.post('/model-versions', { name: 'in a', format: 'onnx', source: checkpoint, projectId: a })
    expect([made.status, made.json.data?.projectId]).toEqual([201, a])
    expect(codeOf(await viewer.client.post('/model-versions', { name: 'tenant-wide', format: 'onnx', source: checkpoint }))).toBe('403 PERMISSION_DENIED')
  })

  test("another tenant's admin naming our project in ?projectId= gets an empty page, and our version by id is 404", async () => {
    const { b, vb } = await setting()
    const other = await tenantOwner(env.api.url)
    for (const path of ['/model-versions', '/edge-inference-packages', '/training-jobs', '/embodiment-profiles']) {
      const res = await other.client.get(`${path}?projectId=${b}`)
      expect({ path, status: res.status, data: res.json.data }).toEqual({ path, status: 200, data: [] })
    }
    expect(codeOf(await other.client.get(`/model-versions/${vb}`))).toBe('404 MODEL_VERSION_NOT_FOUND')
    // An unknown project is the same empty page; a malformed id is a plain 400.
    expect((await other.client.get(`/model-versions?projectId=${randomUUID()}`)).json.data).toEqual([])
    expect(codeOf(await other.client.get('/model-versions?projectId=nope'))).toBe('400 VALIDATION_ERROR')
  })
})

describe('project-scoped work', () => {
  test('a project token lists its own project without a filter, and creates there by default', async () => {
    const { a, member, va } = await setting()
    const token = bearer(env.api.url, (await patFor(member.client, ['model:read', 'model:write'], { projectId: a })).token)
    expect(ids(await token.get('/model-versions'))).toEqual([va])
    const job = await token.post('/training-jobs', { name: 'run 1' })
    expect([job.status, job.json.data?.projectId]).toEqual([201, a])
    const profile = await token.post('/embodiment-profiles', { name: `arm-${randomUUID()}`, robotType: 'so100', controlRateHz: 30, ...FEATURES })
    expect([profile.status, profile.json.data?.projectId]).toEqual([201, a])
    expect(ids(await token.get('/training-jobs'))).toEqual([job.json.data.id])
  })

  test("a body's projectId must be a live project of the tenant where the caller writes", async () => {
    const { t, a, member } = await setting()
    const other = await tenantOwner(env.api.url)
    const otherProject = (await other.client.post('/projects', { name: 'o', slug: `o-${randomUUID()}` })).json.data.id
    const make = (c: Client, projectId: string) => c.post('/training-jobs', { name: 'j', projectId })
    expect(codeOf(await make(t.models, otherProject))).toBe('400 VALIDATION_ERROR')
    expect(codeOf(await make(t.models, randomUUID()))).toBe('400 VALIDATION_ERROR')
    const archived = (await t.client.post('/projects', { name: 'old', slug: `old-${randomUUID()}` })).json.data.id
    expect((await t.client.delete(`/projects/${archived}`)).status).toBe(200)
    expect(codeOf(await make(t.models, archived))).toBe('400 VALIDATION_ERROR')
    // The member contributes to a only.
    const b2 = (await t.client.post('/projects', { name: 'c', slug: `c-${randomUUID()}` })).json.data.id
    expect(codeOf(await make(member.client, b2))).toBe('403 PERMISSION_DENIED')
    expect((await make(member.client, a)).status).toBe(201)
  })

  test("work never draws on another project's: a version from b's job, a package of a's version for b's profile", async () => {
    const { t, a, b } = await setting()
    const job = (await t.models.post('/training-jobs', { name: 'train', projectId: a })).json.data
    expect((await t.models.post(`/training-jobs/${job.id}/completion`, { status: 'completed', outputArtifactPath: 'out/model.onnx' })).status).toBe(200)
    const source = { kind: 'training_job', trainingJobId: job.id }
    const mismatch = await t.models.post('/model-versions', { name: 'x', format: 'onnx', source, projectId: b })
    expect(codeOf(mismatch)).toBe('400 VALIDATION_ERROR')
    expect(JSON.stringify(mismatch.json.errors)).toContain('body.source.trainingJobId')
    // Without a projectId the version takes its job's project.
    const inherited = await t.models.post('/model-versions', { name: 'y', format: 'onnx', source })
    expect([inherited.status, inherited.json.data?.projectId]).toEqual([201, a])

    const built = await packageOf(t, a)
    const profileB = await t.models.post('/embodiment-profiles', {
      name: `b-${randomUUID()}`,
      robotType: 'so100',
      controlRateHz: 30,
      ...FEATURES,
      projectId: b,
    })
    expect(profileB.status).toBe(201)
    const crossed = await t.models.post(`/model-versions/${built.versionId}/edge-inference-package`, {
      embodimentProfileId: profileB.json.data.id,
      mode: 'local',
    })
    expect(codeOf(crossed)).toBe('400 VALIDATION_ERROR')
    expect(JSON.stringify(crossed.json.errors)).toContain('body.embodimentProfileId')
  })

  test('events about project work carry its projectId; tenant-wide work carries null', async () => {
    const { t, a } = await setting()
    const finish = async (projectId?: string) => {
      const job = (await t.models.post('/training-jobs', { name: 'train', projectId })).json.data
      await t.models.post(`/training-jobs/${job.id}/completion`, { status: 'failed', reason: 'diverged' })
      const [e] = await env.api.sql<{ data: any }[]>`select data from events where tenant_id = ${t.tenantId} and data->>'trainingJobId' = ${job.id}`
      return e!.data.projectId
    }
    expect([await finish(a), await finish()]).toEqual([a, null])
    const built = await packageOf(t, a)
    expect((await t.models.post(`/edge-inference-packages/${built.pkg.id}/runs`, RUN)).status).toBe(201)
    const [run] = await env.api.sql<{ data: any }[]>`
      select data from events where tenant_id = ${t.tenantId} and type = 'run.finished' and data->>'packageId' = ${built.pkg.id}`
    expect(run!.data.projectId).toBe(a)
  })

  test("a validation's event and usage carry its version's project", async () => {
    const { t, a } = await setting()
    const bytes = new TextEncoder().encode('onnx weights of project a')
    const made = await t.models.post('/model-versions', {
      name: 'validated',
      format: 'onnx',
      source: { kind: 'imported_checkpoint', path: 'models/a.onnx', sizeBytes: bytes.length },
      projectId: a,
    })
    await uploadThroughUrls(t.models, made.json.data.id, { 'models/a.onnx': bytes })
    expect((await t.models.post(`/model-versions/${made.json.data.id}/validations`)).status).toBe(202)
    expect((await settled(t.models, made.json.data.id)).status).toBe('ready')
    const [event] = await env.api.sql<{ data: any }[]>`
      select data from events where tenant_id = ${t.tenantId} and type = 'model_version.ready' and data->>'modelVersionId' = ${made.json.data.id}`
    expect(event!.data.projectId).toBe(a)
    const usage = await env.api.sql<{ meter: string; project_id: string }[]>`
      select meter, project_id from usage_events where tenant_id = ${t.tenantId} and meter like 'model_validation.%' order by meter`
    expect(usage.map((u) => [u.meter, u.project_id])).toEqual([
      ['model_validation.cpu', a],
      ['model_validation.versions', a],
    ])
  })

  test("the project filter is part of the page token's binding", async () => {
    const { t, a, b } = await setting()
    for (const n of [1, 2]) await t.models.post('/training-jobs', { name: `j${n}`, projectId: a })
    const first = await t.models.get(`/training-jobs?projectId=${a}&pageSize=1`)
    expect(first.json.nextPageToken).toBeString()
    const token = encodeURIComponent(first.json.nextPageToken)
    expect((await t.models.get(`/training-jobs?projectId=${a}&pageSize=1&pageToken=${token}`)).json.data).toHaveLength(1)
    expect(codeOf(await t.models.get(`/training-jobs?projectId=${b}&pageSize=1&pageToken=${token}`))).toBe('400 PAGE_TOKEN_QUERY_MISMATCH')
  })
})
