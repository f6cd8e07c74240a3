import { describe, expect, test } from 'bun:test'
import type { Sql } from '../../api/platform/db'
import { useApi } from '../support/api'
import type { Client } from '../support/client'
import { tenantOwner } from '../support/fixtures'

const api = useApi()

// Microseconds past one whole millisecond: eight rows inside it, three of them at exactly the same instant, so a
// pageSize of 3 puts page boundaries both between distinct microseconds and inside the tie. A cursor rounded to
// milliseconds skips or repeats rows here; only an exact (created_at, id) keyset walks them once each.
const OFFSETS_US = [0, 100, 200, 300, 300, 300, 500, 999]
const PAGE_SIZE = 3

type Owner = Awaited<ReturnType<typeof tenantOwner>>
type Seed = (sql: Sql, o: Owner) => Promise<string[]>

/** The seeded rows' instants, an hour back so nothing created during the test shares their millisecond. */
const at = (sql: Sql) => sql`date_trunc('milliseconds', now()) - interval '1 hour' + o * interval '1 microsecond'`
const offsets = (sql: Sql) => sql`unnest(${sql.array(OFFSETS_US)}::int[]) as o`
const ids = (rows: { id: string }[]) => rows.map((r) => r.id)

/** A ready model version and an embodiment profile for edge packages to reference. */
async function packageSources(sql: Sql, o: Owner) {
  const [p] = await sql<{ id: string }[]>`
    insert into embodiment_profiles (tenant_id, name, robot_type, control_rate_hz, observation_features, action_features)
    values (${o.tenantId}, 'arm', 'so100', 30, '[]', '[]') returning id`
  const [v] = await sql<{ id: string }[]>`
    insert into model_versions (tenant_id, name, format, status, source_kind, source, objects)
    values (${o.tenantId}, 'v', 'onnx', 'ready', 'imported_checkpoint', '{"path":"m.onnx"}', '[]') returning id`
  return { profileId: p!.id, versionId: v!.id }
}
const insertPackages = (sql: Sql, o: Owner, s: { profileId: string; versionId: string }, created: ReturnType<typeof at> | Date) => sql<{ id: string }[]>`
  insert into edge_packages (tenant_id, model_version_id, embodiment_profile_id, mode, steps, target_arch, wire_protocols, use_fake_transport, workflow_id, created_at)
  select ${o.tenantId}, ${s.versionId}, ${s.profileId}, 'local', 1, 'cpu', '{openpi-ws}', true, 'wf-' || o, ${created} from ${offsets(sql)}
  returning id`

/** Ids a list's path names, filled in by its seed. */
const pathParams: Record<string, string> = {}

const seeds: Record<string, Seed> = {
  sessions: async (sql, o) =>
    ids(
      await sql`
    insert into sessions (user_id, token_hash, expires_at, idle_timeout_seconds, created_at)
    select ${o.userId}, sha256(gen_random_uuid()::text::bytea), now() + interval '1 day', 86400, ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  passkeys: async (sql, o) =>
    ids(
      await sql`
    insert into webauthn_credentials (user_id, credential_id, public_key, sign_count, device_type, backed_up, created_at)
    select ${o.userId}, gen_random_uuid()::text, '\\x00'::bytea, 0, 'singleDevice', false, ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  apiKeys: async (sql, o) =>
    ids(
      await sql`
    insert into api_keys (tenant_id, user_id, membership_id, name, token_hash, display_prefix, scopes, expires_at, created_at)
    select ${o.tenantId}, ${o.userId}, ${o.membershipId}, 'k' || o, sha256(gen_random_uuid()::text::bytea), 'rcp_pat_x',
           '{tenant:read}', now() + interval '1 day', ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  memberships: async (sql, o) => {
    const users = await sql<{ id: string }[]>`
      insert into users (email) select 'same-ms-' || gen_random_uuid() || '@example.test' from ${offsets(sql)} returning id`
    return ids(
      await sql`
      insert into memberships (tenant_id, user_id, role, created_at)
      select ${o.tenantId}, u, 'viewer', ${at(sql)}
        from unnest(${sql.array(ids(users))}::uuid[], ${sql.array(OFFSETS_US)}::int[]) as t(u, o)
      returning id`,
    )
  },
  storageJobs: async (sql, o) =>
    ids(
      await sql`
    insert into storage_reconciliation_jobs (tenant_id, status, dry_run, created_at)
    select ${o.tenantId}, 'succeeded', false, ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  invitations: async (sql, o) =>
    ids(
      await sql`
    insert into tenant_invitations (tenant_id, email, role, token_hash, expires_at, created_at)
    select ${o.tenantId}, 'invitee-' || gen_random_uuid() || '@example.test', 'viewer', sha256(gen_random_uuid()::text::bytea),
           now() + interval '1 day', ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  ssoConnections: async (sql, o) =>
    ids(
      await sql`
    insert into sso_connections (tenant_id, name, issuer, client_id, client_secret_sealed, default_role, created_at)
    select ${o.tenantId}, 'idp ' || o, 'https://idp.example.test', 'client', '\\x00'::bytea, 'viewer', ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  domains: async (sql, o) =>
    ids(
      await sql`
    insert into tenant_domains (tenant_id, domain, challenge_token, created_at)
    select ${o.tenantId}, 'd' || o || '-' || gen_random_uuid() || '.example', 'token', ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  embodimentProfiles: async (sql, o) =>
    ids(
      await sql`
    insert into embodiment_profiles (tenant_id, name, robot_type, control_rate_hz, observation_features, action_features, created_at)
    select ${o.tenantId}, 'profile ' || gen_random_uuid(), 'arm', 50, '[{"name":"state","dtype":"float32","shape":[7]}]'::jsonb,
           '[{"name":"actions","dtype":"float32","shape":[7]}]'::jsonb, ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  projects: async (sql, o) =>
    ids(
      await sql`
    insert into projects (tenant_id, name, slug, created_at)
    select ${o.tenantId}, 'project', 'p-' || replace(gen_random_uuid()::text, '-', ''), ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  legalHolds: async (sql, o) =>
    ids(
      await sql`
    insert into legal_holds (tenant_id, matter, reason, scope_kind, created_by, created_at)
    select ${o.tenantId}, 'matter ' || o, 'reason', 'tenant', ${o.userId}, ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  // Members hang under one project: the seed makes it and names it in the path (`{projectId}`).
  projectMembers: async (sql, o) => {
    const [p] = await sql<{ id: string }[]>`insert into projects (tenant_id, name, slug) values (${o.tenantId}, 'members', 'members') returning id`
    pathParams.projectId = p!.id
    const users = await sql<{ id: string }[]>`
      insert into users (email) select 'same-ms-pm-' || gen_random_uuid() || '@example.test' from ${offsets(sql)} returning id`
    return ids(
      await sql`
      with m as (
        insert into memberships (tenant_id, user_id, role)
        select ${o.tenantId}, u, 'viewer' from unnest(${sql.array(ids(users))}::uuid[]) as t(u)
        returning id, user_id)
      insert into project_members (tenant_id, project_id, membership_id, user_id, role, created_at)
      select ${o.tenantId}, ${p!.id}, m.id, m.user_id, 'reader', ${at(sql)}
        from m join unnest(${sql.array(ids(users))}::uuid[], ${sql.array(OFFSETS_US)}::int[]) as t(u, o) on t.u = m.user_id
      returning id`,
    )
  },
  invoices: async (sql, o) =>
    ids(
      await sql`
    insert into invoices (tenant_id, subscription_id, period, period_start, period_end, usage_cutoff, plan_id, currency, lines, subtotal, total, hash, created_at)
    select ${o.tenantId}, s.id, '2020-' || lpad(t.i::text, 2, '0'), now(), now(), now(), 'standard', 'EUR', '[]', 0, 0, repeat('0', 64),
           date_trunc('milliseconds', now()) - interval '1 hour' + t.o * interval '1 microsecond'
      from subscriptions s, unnest(${sql.array(OFFSETS_US)}::int[]) with ordinality as t(o, i)
     where s.tenant_id = ${o.tenantId}
    returning id`,
    ),
  trainingJobs: async (sql, o) =>
    ids(
      await sql`
    insert into training_jobs (tenant_id, name, status, created_at)
    select ${o.tenantId}, 'job ' || o, 'running', ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  modelVersions: async (sql, o) =>
    ids(
      await sql`
    insert into model_versions (tenant_id, name, format, source_kind, source, objects, created_at)
    select ${o.tenantId}, 'version ' || o, 'onnx', 'imported_checkpoint', '{"kind":"imported_checkpoint","path":"m.onnx"}'::jsonb,
           '[{"key":"m.onnx","sizeBytes":null,"sha256":null}]'::jsonb, ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  webhookEndpoints: async (sql, o) =>
    ids(
      await sql`
    insert into webhook_endpoints (tenant_id, url, events, secret_sealed, created_at)
    select ${o.tenantId}, 'https://hooks.example.test/' || o, '{run.finished}', '\\x00'::bytea, ${at(sql)} from ${offsets(sql)}
    returning id`,
    ),
  edgePackages: async (sql, o) => ids(await insertPackages(sql, o, await packageSources(sql, o), at(sql))),
  edgePackageRuns: async (sql, o) => {
    const [pkg] = await insertPackages(sql, o, await packageSources(sql, o), new Date())
    pathParams.packageId = pkg!.id
    return ids(
      await sql`
      insert into edge_package_runs (tenant_id, package_id, steps_done, contract_violations, exit_reason, violations, started_at, finished_at, reported_by, created_at)
      select ${o.tenantId}, ${pkg!.id}, o, 0, 'completed', '[]', now(), now(), ${o.userId}, ${at(sql)} from ${offsets(sql)}
      returning id`,
    )
  },
  // Messages hang under one endpoint: the seed makes it and names it in the path (`{endpointId}`).
  webhookMessages: async (sql, o) => {
    const [ep] = await sql<{ id: string }[]>`
      insert into webhook_endpoints (tenant_id, url, events, secret_sealed) values (${o.tenantId}, 'https://hooks.example.test/', '{training_job.completed}', '\\x00'::bytea)
      returning id`
    pathParams.endpointId = ep!.id
    const events = await sql<{ id: string }[]>`
      insert into events (tenant_id, type, data, dispatched_at) select ${o.tenantId}, 'training_job.completed', '{}', now() from ${offsets(sql)} returning id`
    return ids(
      await sql`
      insert into webhook_messages (tenant_id, endpoint_id, event_id, event_type, status, started_at, created_at)
      select ${o.tenantId}, ${ep!.id}, e, 'training_job.completed', 'succeeded', now(), ${at(sql)}
        from unnest(${sql.array(ids(events))}::uuid[], ${sql.array(OFFSETS_US)}::int[]) as t(e, o)
      returning id`,
    )
  },
  // Audit entries are written only by audit_append; inserting seeded rows is what the table's triggers still allow.
  // One chain per row keeps (chain, seq) unique without numbering them.
  auditEntries: async (sql, o) =>
    ids(
      await sql`
    insert into audit_log (id, chain, seq, hash, occurred_at, tenant_id, subject_user_id, actor_type, action, outcome)
    select gen_random_uuid(), 'seed-' || gen_random_uuid(), 1, sha256(gen_random_uuid()::text::bytea), ${at(sql)}, ${o.tenantId}, ${o.userId}, 'system', 'api_key.created', 'success'
      from ${offsets(sql)}
    returning id`,
    ),
  // The inbox is paged on the user's own numbering, given in commit order; here it follows (created_at, id), the order
  // the test expects, as it does for notifications written one after another.
  notifications: async (sql, o) => {
    const rows = await sql<{ id: string }[]>`
      insert into notifications (user_id, seq, kind, fields, dedupe_key, created_at)
      select ${o.userId}, 1000000 + row_number() over (), 'account.totp_enrolled', '{}', 'seed-' || gen_random_uuid(), ${at(sql)} from ${offsets(sql)}
      returning id`
    await sql`
      update notifications n set seq = r.seq
        from (select id, 1000 + row_number() over (order by created_at, id) as seq from notifications where user_id = ${o.userId} and seq >= 1000000) r
       where n.id = r.id`
    return ids(rows)
  },
  ssoIdentities: async (sql, o) => {
    const [c] = await sql<{ id: string }[]>`
      insert into sso_connections (tenant_id, name, issuer, client_id, client_secret_sealed, default_role)
      values (${o.tenantId}, 'idp', 'https://idp.example.test', 'client', '\\x00'::bytea, 'viewer') returning id`
    return ids(
      await sql`
      insert into sso_identities (connection_id, subject, user_id, created_at)
      select ${c!.id}, 'sub-' || o || '-' || gen_random_uuid(), ${o.userId}, ${at(sql)} from ${offsets(sql)}
      returning id`,
    )
  },
}

// Every list endpoint of the API, with the table its rows live in and the order it promises.
// The audit log's window: from two hours back (the seeds sit one hour back) to an hour ahead.
const auditWindow = `from=${new Date(Date.now() - 7_200_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`
const lists: { path: string; seed: keyof typeof seeds; table: string; order: 'asc' | 'desc'; timeColumn?: string }[] = [
  { path: '/users/me/sessions', seed: 'sessions', table: 'sessions', order: 'desc' },
  { path: '/users/me/webauthn/credentials', seed: 'passkeys', table: 'webauthn_credentials', order: 'desc' },
  { path: '/api-keys?scope=self', seed: 'apiKeys', table: 'api_keys', order: 'desc' },
  { path: '/api-keys?scope=tenant', seed: 'apiKeys', table: 'api_keys', order: 'desc' },
  { path: '/tenants/current/memberships', seed: 'memberships', table: 'memberships', order: 'asc' },
  { path: '/tenants/current/memberships?sortBy=createdAt&sortOrder=desc', seed: 'memberships', table: 'memberships', order: 'desc' },
  { path: '/tenants/current/storage-reconciliation-jobs', seed: 'storageJobs', table: 'storage_reconciliation_jobs', order: 'desc' },
  { path: '/tenants/current/storage-reconciliation-jobs?status=succeeded', seed: 'storageJobs', table: 'storage_reconciliation_jobs', order: 'desc' },
  { path: '/tenant-invitations', seed: 'invitations', table: 'tenant_invitations', order: 'desc' },
  { path: '/tenants/current/sso-connections', seed: 'ssoConnections', table: 'sso_connections', order: 'desc' },
  { path: '/tenants/current/domains', seed: 'domains', table: 'tenant_domains', order: 'desc' },
  { path: '/users/me/sso-identities', seed: 'ssoIdentities', table: 'sso_identities', order: 'desc' },
  { path: '/embodiment-profiles', seed: 'embodimentProfiles', table: 'embodiment_profiles', order: 'desc' },
  { path: '/projects', seed: 'projects', table: 'projects', order: 'desc' },
  { path: '/projects?archived=false', seed: 'projects', table: 'projects', order: 'desc' },
  { path: '/tenants/current/legal-holds', seed: 'legalHolds', table: 'legal_holds', order: 'desc' },
  { path: '/tenants/current/legal-holds?status=active', seed: 'legalHolds', table: 'legal_holds', order: 'desc' },
  { path: '/projects/{projectId}/members', seed: 'projectMembers', table: 'project_members', order: 'desc' },
  { path: '/tenants/current/invoices', seed: 'invoices', table: 'invoices', order: 'desc' },
  { path: '/training-jobs', seed: 'trainingJobs', table: 'training_jobs', order: 'desc' },
  { path: '/training-jobs?status=running', seed: 'trainingJobs', table: 'training_jobs', order: 'desc' },
  { path: '/model-versions', seed: 'modelVersions', table: 'model_versions', order: 'desc' },
  { path: '/model-versions?status=draft&format=onnx', seed: 'modelVersions', table: 'model_versions', order: 'desc' },
  { path: '/webhook-endpoints', seed: 'webhookEndpoints', table: 'webhook_endpoints', order: 'desc' },
  { path: '/webhook-endpoints?enabled=true', seed: 'webhookEndpoints', table: 'webhook_endpoints', order: 'desc' },
  { path: '/edge-inference-packages', seed: 'edgePackages', table: 'edge_packages', order: 'desc' },
  { path: '/edge-inference-packages?status=queued', seed: 'edgePackages', table: 'edge_packages', order: 'desc' },
  { path: '/edge-inference-packages/{packageId}/runs', seed: 'edgePackageRuns', table: 'edge_package_runs', order: 'desc' },
  { path: '/webhook-endpoints/{endpointId}/messages', seed: 'webhookMessages', table: 'webhook_messages', order: 'desc' },
  { path: '/webhook-endpoints/{endpointId}/messages?status=succeeded', seed: 'webhookMessages', table: 'webhook_messages', order: 'desc' },
  { path: `/tenants/current/audit-log?${auditWindow}`, seed: 'auditEntries', table: 'audit_log', order: 'desc', timeColumn: 'occurred_at' },
  { path: `/tenants/current/audit-log?${auditWindow}&action=api_key.`, seed: 'auditEntries', table: 'audit_log', order: 'desc', timeColumn: 'occurred_at' },
  { path: '/users/me/notifications', seed: 'notifications', table: 'notifications', order: 'desc' },
  { path: '/users/me/notifications?state=unread', seed: 'notifications', table: 'notifications', order: 'desc' },
  { path: '/users/me/security-activity', seed: 'auditEntries', table: 'audit_log', order: 'desc', timeColumn: 'occurred_at' },
]

async function walk(client: Client, path: string, pageSize: number): Promise<string[]> {
  const seen: string[] = []
  let token: string | undefined
  let pages = 0
  do {
    const sep = path.includes('?') ? '&' : '?'
    const res = await client.get(`${path}${sep}pageSize=${pageSize}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)
    expect({ path, status: res.status, body: res.status === 200 ? null : res.text }).toEqual({ path, status: 200, body: null })
    seen.push(...res.json.data.map((r: { id: string }) => r.id))
    token = res.json.nextPageToken
    if (++pages > 50) throw new Error(`${path}: the walk does not end`)
  } while (token)
  return seen
}

describe('every list walks rows created in the same millisecond exactly once, in order', () => {
  for (const list of lists) {
    test(`GET ${list.path}`, async () => {
      const owner = await tenantOwner(api.url)
      const seeded = await seeds[list.seed]!(api.sql, owner)
      const dir = api.sql.unsafe(list.order)
      const expected = ids(
        await api.sql<{ id: string }[]>`
        select id from ${api.sql(list.table)} where id = any(${api.sql.array(seeded)}::uuid[]) order by ${api.sql(list.timeColumn ?? 'created_at')} ${dir}, id ${dir}`,
      )

      const path = list.path.replace(/\{(\w+)\}/g, (_, name: string) => pathParams[name]!)
      const walked = await walk(owner.client, path, PAGE_SIZE)
      expect(new Set(walked).size).toBe(walked.length)
      expect(walked.filter((id) => seeded.includes(id))).toEqual(expected)
      // The small-page walk and a single big page agree on everything, the rows the test did not seed included.
      expect(walked).toEqual(await walk(owner.client, path, 100))
    })
  }
})

test('the lists above are every list of the API: each operation that takes a pageToken', async () => {
  const doc = await (await fetch(`${api.url}/v1/openapi.json`)).json()
  const paged = Object.entries(doc.paths as Record<string, Record<string, { parameters?: { name: string }[] }>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.parameters?.some((p) => p.name === 'pageToken'))
      .map(([m]) => `${m.toUpperCase()} ${path}`),
  )
  const covered = new Set(lists.map((l) => `GET /v1${l.path.split('?')[0]}`))
  expect(paged.sort()).toEqual([...covered].sort())
})
