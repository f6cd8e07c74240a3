// The schema fuzzer's tenant holds one real resource of every kind an operation names by id, so a generated request
// reaches the operation's own logic instead of a 404 for an id nobody made. The ids reach schemathesis the way its
// configuration documents: per-operation `parameters` (schemathesis.toml [[operations]]), which fix a path
// parameter's value while the rest of the request is still generated.
import type { Client } from '../support/client'
import { uniqueEmail } from '../support/fixtures'
import { bucketsIn } from '../storage/helpers'

/** A webhook receiver's address the outbound guard lets through in the test command (loopback is allowed there). */
export const FUZZ_HOOK_URL = 'https://127.0.0.1/fuzz/hook'

/** Path parameter name → a real id in the fuzzer's tenant. `jobId` names two kinds, so it is keyed by path below. */
export type SeededIds = Record<string, string>

async function made(res: Promise<{ status: number; text: string; json: any }>, what: string, status = 201) {
  const r = await res
  if (r.status !== status) throw new Error(`fuzz seed, ${what}: ${r.status} ${r.text}`)
  return r.json.data
}

/** Provisions the tenant's storage and makes one of each resource through the API, as the tenant's owner. */
export async function seedTenant(owner: Client): Promise<SeededIds> {
  await made(owner.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local' } }), 'storage', 200)
  await bucketsIn(owner, 'ready', 90_000)
  const tag = crypto.randomUUID().slice(0, 8)
  const project = await made(owner.post('/projects', { name: 'Fuzz project', slug: `fuzz-${tag}` }), 'project')
  // A researcher of the tenant, made a project member (the owner's own tenant role is above any project role).
  const researcher = (await made(owner.post('/users', { email: uniqueEmail('fuzz-member'), mode: 'create', role: 'researcher' }), 'member')).user
  await made(owner.post(`/projects/${project.id}/members`, { userId: researcher.id, role: 'contributor' }), 'project member')
  const profile = await made(
    owner.post('/embodiment-profiles', {
      name: `fuzz ${tag}`,
      robotType: 'aloha',
      controlRateHz: 50,
      observationFeatures: [{ name: 'observation.state', dtype: 'float32', shape: [14], kind: 'state' }],
      actionFeatures: [{ name: 'action', dtype: 'float32', shape: [50, 14], kind: 'action' }],
    }),
    'embodiment profile',
  )
  const trainingJob = await made(owner.post('/training-jobs', { name: `fuzz ${tag}` }), 'training job')
  const version = await made(
    owner.post('/model-versions', { name: `fuzz ${tag}`, format: 'onnx', source: { kind: 'imported_checkpoint', path: 'fuzz/m.onnx' } }),
    'model version',
  )
  const hook = (await made(owner.post('/webhook-endpoints', { url: FUZZ_HOOK_URL, events: ['training_job.completed'] }), 'webhook endpoint')).endpoint
  const message = await made(owner.post(`/webhook-endpoints/${hook.id}/test-events`, {}), 'test event', 202)
  const domain = await made(owner.post('/tenants/current/domains', { domain: `${tag}.fuzz.example` }), 'domain')
  const invitation = await made(owner.post('/tenant-invitations', { email: uniqueEmail('fuzz-invitee'), role: 'viewer' }), 'invitation')
  const hold = await made(
    owner.post('/tenants/current/legal-holds', { matter: 'fuzz matter', reason: 'fuzz reason', scope: { kind: 'project', projectId: project.id } }),
    'legal hold',
  )
  const now = Date.now()
  const exported = await made(
    owner.post('/tenants/current/audit-log/exports', { from: new Date(now - 3_600_000).toISOString(), to: new Date(now).toISOString() }),
    'audit export',
  )
  const reconciliation = await made(owner.post('/tenants/current/storage-reconciliation-jobs', { dryRun: true }), 'reconciliation job')
  const key = await made(owner.post('/api-keys', { name: `fuzz spare ${tag}`, scopes: ['tenant:read'] }), 'spare token')
  return {
    projectId: project.id,
    userId: researcher.id,
    profileId: profile.id,
    trainingJobId: trainingJob.id,
    modelVersionId: version.id,
    endpointId: hook.id,
    messageId: message.id,
    domainId: domain.id,
    invitationId: invitation.id,
    holdId: hold.id,
    exportId: exported.id,
    'jobId /v1/tenants/current/storage-reconciliation-jobs/{jobId}': reconciliation.job.id,
    apiKeyId: key.apiKey.id,
  }
}

type OpenApi = { paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>> }

const METHODS = ['get', 'put', 'post', 'patch', 'delete']

/** The schemathesis.toml [[operations]] entries that give every operation whose path ids were all seeded those ids.
 *  A DELETE keeps generated ids: run early, it would take the seeded resource from every operation after it. */
export function seededOperations(doc: OpenApi, ids: SeededIds, skip: string[]): string {
  const entries: string[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
    if (names.length === 0) continue
    const values = names.map((name) => ids[`${name} ${path}`] ?? (name === 'jobId' ? undefined : ids[name]))
    if (values.some((v) => v === undefined)) continue
    for (const method of METHODS) {
      const label = `${method.toUpperCase()} ${path}`
      if (!item[method] || method === 'delete' || skip.includes(label)) continue
      const parameters = names.map((name, i) => `${JSON.stringify(`path.${name}`)} = ${JSON.stringify(values[i])}`).join(', ')
      entries.push(`[[operations]]\ninclude-name = ${JSON.stringify(label)}\nparameters = { ${parameters} }\n`)
    }
  }
  return entries.join('\n')
}
