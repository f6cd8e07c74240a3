// The schema fuzzer's tenant holds one real resource of every kind an operation names by id, so a generated request
// reaches the operation's own logic instead of a 404 for an id nobody made. The ids reach schemathesis the way its
// configuration documents: per-operation `parameters` (schemathesis.toml [[operations]]), which fix a path
// parameter's value while the rest of the request is still generated.
import type { Client } from '../support/client'
import { uniqueEmail } from '../support/fixtures'
import { bucketsIn } from '../storage/helpers'
import { waitForMail } from '../support/mailbox'

/** A webhook receiver's address the outbound guard lets through in the test command (loopback is allowed there). */
export const FUZZ_HOOK_URL = 'https://127.0.0.1/fuzz/hook'

/** Path parameter name → a real id in the fuzzer's tenant. `jobId` names two kinds, so it is keyed by path below. */
export type SeededIds = Record<string, string>

async function made(res: Promise<{ status: number; text: string; json: any }>, what: string, status = 201) {
  const r = await res
  if (r.status !== status) throw new Error(`fuzz seed, ${what}: ${r.status} ${r.text}`)
  return r.json.data
}

/** A member the owner makes (mode create: no mail to follow), as the person it answers. */
async function member(owner: Client, prefix: string, role: string, email = uniqueEmail(prefix)) {
  return (await made(owner.post('/users', { email, mode: 'create', role }), prefix)).user as { id: string }
}

/** A draft onnx model version of one object (FUZZ_MODEL_KEY), not yet uploaded. */
const draft = (owner: Client, name: string) =>
  made(owner.post('/model-versions', { name, format: 'onnx', source: { kind: 'imported_checkpoint', path: FUZZ_MODEL_KEY } }), name)

/** What the hooks (schemathesis_hooks.py) may use of the seeded tenant beside the path ids: no path parameter names these. */
export interface HookIds {
  /** A tenant member in no project. */
  nonMemberUserId: string
  /** The draft version only uploads name: the fuzzer validates the other one, which ends its uploads. */
  uploadVersionId: string
  /** Drafts with their object stored, one for each valid "validate" case (a validated version is validated no more). */
  validationVersionIds: string[]
  /** Members an administrator asks a reset mail for, in turn: an address takes one a minute. */
  resetTargetIds: string[]
}

/** Provisions the tenant's storage and makes one of each resource through the API, as the tenant's owner. */
export async function seedTenant(owner: Client): Promise<{ ids: SeededIds; hooks: HookIds }> {
  await made(owner.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local' } }), 'storage', 200)
  await bucketsIn(owner, 'ready', 90_000)
  const tag = crypto.randomUUID().slice(0, 8)
  const project = await made(owner.post('/projects', { name: 'Fuzz project', slug: `fuzz-${tag}` }), 'project')
  // A researcher of the tenant, made a project member (the owner's own tenant role is above any project role).
  const researcher = await member(owner, 'fuzz-member', 'researcher')
  await made(owner.post(`/projects/${project.id}/members`, { userId: researcher.id, role: 'contributor' }), 'project member')
  // And one in no project: the member a valid "add a project member" case names (schemathesis_hooks.py).
  const outsider = await member(owner, 'fuzz-outsider', 'viewer')
  const resetTargets = await Promise.all(Array.from({ length: RESET_TARGETS }, async () => (await member(owner, 'fuzz-reset', 'viewer')).id))
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
  const version = await draft(owner, `fuzz ${tag}`)
  const validationVersions = await Promise.all(Array.from({ length: VALIDATION_VERSIONS }, (_, i) => storedDraft(owner, `fuzz validation ${i} ${tag}`)))
  const uploadVersion = await draft(owner, `fuzz upload ${tag}`)
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
  const ids: SeededIds = {
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
  return {
    ids,
    hooks: { nonMemberUserId: outsider.id, uploadVersionId: uploadVersion.id, validationVersionIds: validationVersions, resetTargetIds: resetTargets },
  }
}

/** A reset grant a valid "confirm a password reset" case may spend: the mailed link's token and the mailed code. */
export interface ResetGrant {
  email: string
  token: string
  code: string
}

/** Members of the tenant (not the fuzzer's own account: a confirmed reset ends every session of the user) with a reset
 *  mail each, asked for by the owner and read from the mail catcher, as the person would read it. One per phase that
 *  fuzzes the confirmation (coverage, fuzzing, stateful) and for schemathesis's later coverage passes. */
export async function seedResetGrants(owner: Client, count = 8): Promise<ResetGrant[]> {
  // At once: each is its own address (one reset mail a minute each), and the mail workflow takes seconds under load.
  return Promise.all(Array.from({ length: count }, () => resetGrant(owner)))
}

async function resetGrant(owner: Client): Promise<ResetGrant> {
  const email = uniqueEmail('fuzz-confirm')
  const user = await member(owner, 'fuzz-confirm', 'viewer', email)
  await made(owner.post(`/users/${user.id}/password-reset-requests`, {}), 'reset request', 202)
  // The address is this grant's alone, so its one mail is the grant's.
  const mail = await waitForMail(email, { subject: /Reset your/ })
  const token = /token=([A-Za-z0-9_%.-]+)/.exec(mail.text)?.[1]
  const code = /code (\d{8})/.exec(mail.text)?.[1]
  if (!token || !code) throw new Error(`fuzz seed, reset mail: no token or code in ${JSON.stringify(mail.text)}`)
  return { email, token: decodeURIComponent(token), code }
}

// A pass's phases (and schemathesis's later coverage passes) each need one served request, at most one a minute each.
const RESET_TARGETS = 8

/** The seeded model version's one object: the key an upload through the API names. */
export const FUZZ_MODEL_KEY = 'fuzz/m.onnx'
const VALIDATION_VERSIONS = 4

/** A draft model version whose one object is stored through the API. */
async function storedDraft(owner: Client, name: string): Promise<string> {
  const version = await draft(owner, name)
  const upload = owner.call('PUT', `/model-versions/${version.id}/object-content?key=${encodeURIComponent(FUZZ_MODEL_KEY)}`, {
    raw: 'fuzz object',
    headers: { 'content-type': 'application/octet-stream' },
  })
  await made(upload, `${name} object`, 200)
  return version.id
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
