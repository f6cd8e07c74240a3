// Tenant isolation as an intruder meets it: tenant B holds real resources of every kind a route names by id, tenant
// A's owner (every permission) calls every such route on B's real ids with a body the route accepts, and every answer
// is 404, B's rows unchanged, nothing of B in any answer. A 400 would prove nothing (the id was never looked up), so
// the bodies are valid; a route whose body this file does not know fails the test until it is given one.
import { describe, expect, test } from 'bun:test'
import { notify } from '../../api/notifications/service'
import { useApi } from '../support/api'
import { hourAgo } from '../support/audit'
import { patFor, tenantOwner, uniqueEmail } from '../support/fixtures'
import { bearer, memberOf } from './members'

const api = useApi()

const profile = (name: string) => ({
  name,
  robotType: 'aloha',
  controlRateHz: 50,
  observationFeatures: [{ name: 'observation.state', dtype: 'float32', shape: [14], kind: 'state' }],
  actionFeatures: [{ name: 'action', dtype: 'float32', shape: [50, 14], kind: 'action' }],
})

/** Tenant B and one real resource of every kind an id route names: made through the API by B's owner where a
 *  request makes it alone; seeded in SQL where the API would need a finished workflow, storage or an identity
 *  provider first (a ready model version's package and its run, a storage job, an export, an SSO connection and
 *  identity, a delivered message, a passkey). */
async function tenantWithEverything() {
  const b = await tenantOwner(api.url)
  const sql = api.sql
  const made = async (res: Promise<{ status: number; text: string; json: any }>) => {
    const r = await res
    if (r.status !== 201) throw new Error(`B's setup: ${r.status} ${r.text}`)
    return r.json.data
  }
  const member = await memberOf(api.url, sql, b.tenantId, 'researcher', uniqueEmail('isolated'))
  const key = await patFor(member.client, ['tenant:read'])
  const invited = uniqueEmail('isolated-invite')
  const invitation = await made(b.client.post('/tenant-invitations', { email: invited, role: 'viewer' }))
  const claimedDomain = `${uniqueEmail('isolated').split('@')[0]}.example`
  const domain = await made(b.client.post('/tenants/current/domains', { domain: claimedDomain }))
  const hookUrl = `https://127.0.0.1/${claimedDomain}/hook`
  const hook = (await made(b.client.post('/webhook-endpoints', { url: hookUrl, events: ['training_job.completed'] }))).endpoint
  const model = b.client.withBearer((await patFor(b.client, ['model:read', 'model:write'])).token)
  const bProfile = await made(model.post('/embodiment-profiles', profile(`b ${crypto.randomUUID()}`)))
  const project = await made(b.client.post('/projects', { name: 'b project', slug: `b-${crypto.randomUUID()}` }))
  const legalHold = await made(b.client.post('/tenants/current/legal-holds', { matter: 'b matter', reason: 'b reason', scope: { kind: 'tenant' } }))
  const projectMember = await made(b.client.post(`/projects/${project.id}/members`, { userId: member.userId, role: 'contributor' }))
  const job = await made(model.post('/training-jobs', { name: 'b job' }))
  const version = await made(model.post('/model-versions', { name: 'b draft', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'm.onnx' } }))

  const [ready] = await sql<{ id: string }[]>`
    insert into model_versions (tenant_id, name, format, status, source_kind, source, objects)
    values (${b.tenantId}, 'b ready', 'onnx', 'ready', 'imported_checkpoint', '{"path":"m.onnx"}', '[]') returning id`
  const [pkg] = await sql<{ id: string }[]>`
    insert into edge_packages (tenant_id, model_version_id, embodiment_profile_id, mode, steps, target_arch, wire_protocols, use_fake_transport, workflow_id)
    values (${b.tenantId}, ${ready!.id}, ${bProfile.id}, 'local', 1, 'cpu', '{openpi-ws}', true, ${`wf-${crypto.randomUUID()}`}) returning id`
  const [run] = await sql<{ id: string }[]>`
    insert into edge_package_runs (tenant_id, package_id, steps_done, contract_violations, exit_reason, violations, started_at, finished_at, reported_by)
    values (${b.tenantId}, ${pkg!.id}, 1, 0, 'completed', '[]', now(), now(), ${b.userId}) returning id`
  const [storageJob] = await sql<{ id: string }[]>`
    insert into storage_reconciliation_jobs (tenant_id, status, dry_run) values (${b.tenantId}, 'succeeded', true) returning id`
  const [exported] = await sql<{ id: string }[]>`
    insert into audit_exports (id, tenant_id, from_at, to_at, requested_by, workflow_id)
    values (gen_random_uuid(), ${b.tenantId}, now() - interval '1 hour', now(), ${b.userId}, ${`wf-${crypto.randomUUID()}`}) returning id`
  const [connection] = await sql<{ id: string }[]>`
    insert into sso_connections (tenant_id, name, issuer, client_id, client_secret_sealed, default_role)
    values (${b.tenantId}, 'b idp', 'https://idp.example.test', 'client', '\\x00'::bytea, 'viewer') returning id`
  const [identity] = await sql<{ id: string }[]>`
    insert into sso_identities (connection_id, subject, user_id) values (${connection!.id}, ${`sub-${crypto.randomUUID()}`}, ${b.userId}) returning id`
  const [passkey] = await sql<{ id: string }[]>`
    insert into webauthn_credentials (user_id, credential_id, public_key, sign_count, device_type, backed_up)
    values (${b.userId}, ${crypto.randomUUID()}, '\\x00'::bytea, 0, 'singleDevice', false) returning id`
  const [event] = await sql<{ id: string }[]>`
    insert into events (tenant_id, type, data, dispatched_at) values (${b.tenantId}, 'training_job.completed', '{}', now()) returning id`
  const [message] = await sql<{ id: string }[]>`
    insert into webhook_messages (tenant_id, endpoint_id, event_id, event_type, status, started_at)
    values (${b.tenantId}, ${hook.id}, ${event!.id}, 'training_job.completed', 'failed', now()) returning id`
  const [session] = await sql<{ id: string }[]>`select id from sessions where user_id = ${member.userId} limit 1`
  const notice = await sql.begin((tx) =>
    notify(tx, api.deps.keys, {
      userId: member.userId,
      tenantId: b.tenantId,
      kind: 'audit_export.ready',
      fields: { exportId: exported!.id, entries: 1 },
      dedupeKey: 'isolation',
    }),
  )
  const [invoice] = await sql<{ id: string }[]>`
    insert into invoices (tenant_id, subscription_id, period, period_start, period_end, usage_cutoff, plan_id, currency, lines, subtotal, total, hash)
    select tenant_id, id, '2020-01', now(), now(), now(), plan_id, 'EUR', '[]', 0, 0, repeat('0', 64) from subscriptions where tenant_id = ${b.tenantId}
    returning id`

  // Path parameter → B's real id, and the row it names (table, id) for the before/after comparison.
  const ids: Record<string, [string, string]> = {
    membershipId: ['memberships', member.membershipId],
    userId: ['users', member.userId],
    apiKeyId: ['api_keys', key.id],
    invitationId: ['tenant_invitations', invitation.id],
    domainId: ['tenant_domains', domain.id],
    endpointId: ['webhook_endpoints', hook.id],
    messageId: ['webhook_messages', message!.id],
    profileId: ['embodiment_profiles', bProfile.id],
    projectId: ['projects', project.id],
    holdId: ['legal_holds', legalHold.id],
    trainingJobId: ['training_jobs', job.id],
    modelVersionId: ['model_versions', version.id],
    packageId: ['edge_packages', pkg!.id],
    jobId: ['storage_reconciliation_jobs', storageJob!.id],
    exportId: ['audit_exports', exported!.id],
    connectionId: ['sso_connections', connection!.id],
    identityId: ['sso_identities', identity!.id],
    credentialId: ['webauthn_credentials', passkey!.id],
    sessionId: ['sessions', session!.id],
    notificationId: ['notifications', notice!.id],
    invoiceId: ['invoices', invoice!.id],
  }
  const extra: [string, string][] = [
    ['model_versions', ready!.id],
    ['edge_package_runs', run!.id],
    ['project_members', projectMember.id],
  ]
  const secrets = [
    b.tenantId,
    b.email,
    member.email,
    invited,
    claimedDomain,
    domain.verificationRecord.value,
    hookUrl,
    'b idp',
    bProfile.name,
    'b job',
    'b draft',
    'b matter',
  ]
  return { b, member, key, ids, extra, secrets }
}

/** Every row of B's resources as stored, by table and id. */
async function snapshot(rows: [string, string][]) {
  const out: Record<string, unknown> = {}
  for (const [table, id] of rows) {
    const [row] = await api.sql.unsafe(`select to_jsonb(t) as r from ${table} t where id = $1`, [id])
    out[`${table} ${id}`] = row?.r ?? null
  }
  return out
}

describe('tenant isolation', () => {
  test("every route that names an id, called by another tenant's owner on this tenant's real ids with valid bodies, answers 404 and changes nothing", async () => {
    const victim = await tenantWithEverything()
    const rows = [...Object.values(victim.ids), ...victim.extra]
    const before = await snapshot(rows)

    // Tenant A's owner, by session (every permission of the owner role), with resources of its own where a valid body
    // names one: a body naming B's profile would be refused for the profile, not for the id under test.
    const a = await tenantOwner(api.url)
    const aProfile = (await a.client.post('/embodiment-profiles', profile(`a ${crypto.randomUUID()}`))).json.data
    expect(aProfile?.id).toBeString()
    const bodies: Record<string, unknown> = {
      'PATCH /v1/embodiment-profiles/{profileId}': { name: 'renamed by a' },
      'PATCH /v1/projects/{projectId}': { name: 'renamed by a' },
      'POST /v1/projects/{projectId}/members': { userId: a.userId, role: 'maintainer' },
      'PATCH /v1/projects/{projectId}/members/{userId}': { role: 'maintainer' },
      'PATCH /v1/tenants/current/memberships/{membershipId}': { role: 'viewer' },
      'PATCH /v1/tenants/current/sso-connections/{connectionId}': { name: 'renamed by a' },
      'PATCH /v1/webhook-endpoints/{endpointId}': { description: 'renamed by a' },
      'POST /v1/training-jobs/{trainingJobId}/completion': { status: 'completed', outputArtifactPath: 'runs/a/model.onnx' },
      'POST /v1/model-versions/{modelVersionId}/edge-inference-package': { embodimentProfileId: aProfile.id, mode: 'local', useFakeTransport: true },
      'POST /v1/edge-inference-packages/{packageId}/runs': {
        stepsDone: 1,
        latencyMs: null,
        contractViolations: 0,
        exitReason: 'completed',
        violations: [],
        startedAt: hourAgo(),
        finishedAt: new Date().toISOString(),
      },
      'POST /v1/webhook-endpoints/{endpointId}/recoveries': { since: hourAgo() },
    }
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as any
    const walked: string[] = []
    const answers: { label: string; status: number; code: string | undefined; message: string | undefined }[] = []
    const unknown: string[] = []
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      if (!path.startsWith('/v1/') || !path.includes('{')) continue
      for (const [method, op] of Object.entries(ops)) {
        if (!op.security?.length) continue // public operations hold no tenant data
        const label = `${method.toUpperCase()} ${path}`
        const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
        const missing = names.filter((n) => !victim.ids[n])
        const json = op.requestBody?.content?.['application/json']
        if (missing.length > 0 || (json && op.requestBody.required && !(label in bodies))) {
          unknown.push(label)
          continue
        }
        const concrete = path.replace(/\{(\w+)\}/g, (_, n: string) => victim.ids[n]![1]).slice('/v1'.length)
        let res: Awaited<ReturnType<typeof a.client.call>>
        if (op.requestBody?.content?.['application/octet-stream']) {
          // The object's bytes, under the key B's draft version declares.
          res = await a.client.call(method.toUpperCase(), `${concrete}?key=m.onnx`, {
            raw: 'onnx bytes',
            headers: { 'content-type': 'application/octet-stream' },
          })
        } else {
          res = await a.client.call(method.toUpperCase(), concrete, label in bodies ? { body: bodies[label] } : {})
        }
        walked.push(label)
        answers.push({ label, status: res.status, code: res.json?.code, message: res.json?.message })
        // A value the caller sent may be echoed (a 404 naming the id asked for); nothing else of B may appear.
        for (const s of victim.secrets) expect({ label, leaks: res.text.includes(s) ? s : null }).toEqual({ label, leaks: null })
      }
    }
    expect({ routesWithoutAKnownIdOrBody: unknown }).toEqual({ routesWithoutAKnownIdOrBody: [] })
    expect(walked.length).toBeGreaterThan(30)
    expect(answers.filter((x) => x.status !== 404)).toEqual([])
    expect(await snapshot(rows)).toEqual(before)

    // B's own credentials still work and B still sees its own: nothing was revoked or taken.
    expect((await bearer(api.url, victim.key.token).get('/tokens/self')).status).toBe(200)
    expect((await victim.b.client.get(`/tenants/current/memberships/${victim.member.membershipId}`)).status).toBe(200)
    expect((await victim.b.client.get(`/tenants/current/audit-log/exports/${victim.ids.exportId![1]}`)).status).toBe(200)
  }, 120_000)
})
