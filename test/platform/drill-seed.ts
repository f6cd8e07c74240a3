// Rows for every table of the backup drill (test/platform/backup-restore.test.ts): through the API where an operation
// makes them, by SQL where only an outside party does (an OpenID Provider, an authenticator) or only a workflow
// in a state the drill does not wait for. The drill fails when a table is still empty, so a new table needs a line here.
import { randomBytes } from 'node:crypto'
import { createDb } from '../../api/platform/db'
import { enrolTotp, signIn } from '../mfa/helpers'
import { Client } from '../support/client'
import { signedUpUser, uniqueEmail, uniqueSlug } from '../support/fixtures'

/** Robot runs reported through the API, each with the most violations a report may carry: the drill's table of
 *  several MB (random text, so TOAST's compression does not shrink it). */
export const RUNS = 240
export const BIG_TABLE = 'edge_package_runs'

const randomText = (chars: number) =>
  randomBytes(Math.ceil(chars / 2))
    .toString('hex')
    .slice(0, chars)

export async function seedThroughApi(base: string, owner: { client: Client; email: string }, pat: Client, packageId: string): Promise<void> {
  const made = async (what: string, res: Promise<{ status: number; text: string }>) => {
    const r = await res
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`)
  }
  // Projects and an idempotency key.
  await made('project', owner.client.post('/projects', { name: 'Drill', slug: uniqueSlug('drill') }, { 'idempotency-key': crypto.randomUUID() }))
  await made('training job', owner.client.post('/training-jobs', { name: 'drill finetune' }))
  // An invitation and a password reset: their rows, and mail in the outbox.
  await made('invitation', owner.client.post('/tenant-invitations', { email: uniqueEmail('drill-invitee'), role: 'viewer' }))
  await made('password reset', owner.client.post('/password-resets', { email: owner.email }))
  await made('domain claim', owner.client.post('/tenants/current/domains', { domain: `${uniqueSlug('drill')}.example.test` }))
  await made('reconciliation', owner.client.post('/tenants/current/storage-reconciliation-jobs', { dryRun: true }))
  // A device sign-in waiting for its approval (public: no credential).
  await made('device authorization', new Client(base).post('/device/authorizations', { clientName: 'drill robot', scopes: ['tenant:read'] }))
  const hour = 3_600_000
  await made(
    'audit export',
    owner.client.post('/tenants/current/audit-log/exports', {
      from: new Date(Date.now() - hour).toISOString(),
      to: new Date(Date.now() + hour).toISOString(),
    }),
  )
  // A second person with TOTP (factor and recovery codes), signing in (a challenge) and failing once (a failure).
  const second = await signedUpUser(base)
  await enrolTotp(second.client)
  const { client, session } = await signIn(base, second.email)
  await client.post('/sessions/mfa-challenges/confirmations', { challengeId: session.mfaChallenge.id, method: 'totp', code: '000000' })
  // The big table: runs a robot reported.
  const started = new Date(Date.now() - 60_000).toISOString()
  const finished = new Date().toISOString()
  let next = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < RUNS) {
        next++
        await made(
          'run report',
          pat.post(`/edge-inference-packages/${packageId}/runs`, {
            stepsDone: 900,
            latencyMs: { p50: 12, p99: 31 },
            contractViolations: 20,
            exitReason: 'contract_violation',
            violations: Array.from({ length: 20 }, (_, i) => ({ feature: `observation.state.${i}`, expected: randomText(500), got: randomText(500) })),
            startedAt: started,
            finishedAt: finished,
          }),
        )
      }
    }),
  )
}

/** What no API call of the drill makes: an SSO connection with an identity and a login in progress (a real OpenID
 *  Provider's part), a passkey and its challenge (an authenticator's), a registration invitation (an operator
 *  command's), an audit entry waiting to be sealed, a reconciliation finding, a usage snapshot, an auth policy and a webhook endpoint's pacing slot. */
export async function seedBySql(databaseUrl: string, tenantId: string, userId: string): Promise<void> {
  const sql = createDb(databaseUrl, { max: 1 })
  try {
    await sql.begin(async (tx) => {
      const [conn] = await tx<{ id: string }[]>`
        insert into sso_connections (tenant_id, name, issuer, client_id, client_secret_sealed, default_role)
        values (${tenantId}, 'drill idp', 'https://idp.example.test', 'drill-client', ${randomBytes(48)}, 'viewer') returning id`
      await tx`insert into sso_identities (connection_id, subject, user_id) values (${conn!.id}, 'drill-subject', ${userId})`
      await tx`
        insert into sso_login_states (state_hash, connection_id, nonce, code_verifier, expires_at)
        values (${randomBytes(32)}, ${conn!.id}, ${randomText(32)}, ${randomText(64)}, now() + interval '10 minutes')`
      await tx`
        insert into webauthn_credentials (user_id, credential_id, public_key, sign_count, device_type, backed_up)
        values (${userId}, ${randomText(43)}, ${randomBytes(77)}, 0, 'singleDevice', false)`
      await tx`
        insert into webauthn_challenges (challenge, purpose, expires_at, user_id)
        values (${randomText(43)}, 'registration', now() + interval '5 minutes', ${userId})`
      await tx`
        insert into registration_invitations (email, token_hash, expires_at)
        values (${uniqueEmail('drill-registration')}, ${randomBytes(32)}, now() + interval '7 days')`
      const [job] = await tx<{ id: string }[]>`select id from storage_reconciliation_jobs where tenant_id = ${tenantId} limit 1`
      const [bucket] = await tx<{ name: string }[]>`select name from storage_buckets where tenant_id = ${tenantId} limit 1`
      await tx`
        insert into storage_reconciliation_findings (job_id, tenant_id, kind, bucket, key)
        values (${job!.id}, ${tenantId}, 'orphan', ${bucket!.name}, 'drill/orphan')
        on conflict do nothing`
      await tx`
        insert into storage_usage (tenant_id, kind, bucket, object_count, bytes, computed_at)
        values (${tenantId}, 'general', ${bucket!.name}, 1, 1, now())
        on conflict do nothing`
      await tx`
        insert into tenant_auth_policies (tenant_id, mfa_required, allowed_sign_in_methods, password_min_length, session_absolute_minutes,
          session_idle_minutes, sso_enforced, allowed_email_domains)
        values (${tenantId}, false, ${['password', 'passkey', 'sso']}, 12, 43200, 10080, false, ${[]})
        on conflict do nothing`
      await tx`
        insert into webhook_endpoint_pacing (endpoint_id, next_slot_at)
        select id, now() from webhook_endpoints where tenant_id = ${tenantId}
        on conflict do nothing`
      // An entry committed but not yet sealed (the API's sealer takes it within AUDIT_SEAL_INTERVAL_MS): a copy of
      // the tenant's last one, which the restored platform seals into the chain.
      await tx`
        insert into audit_inbox (id, chain, occurred_at, tenant_id, subject_user_id, actor_type, actor_id, actor_label, credential_id, action,
          target_type, target_id, outcome, reason, ip, user_agent, request_id, changes, details, trace_id)
        select gen_random_uuid(), chain, now(), tenant_id, subject_user_id, actor_type, actor_id, actor_label, credential_id, action,
          target_type, target_id, outcome, reason, ip, user_agent, request_id, changes, details, trace_id
        from audit_log where tenant_id = ${tenantId} order by seq desc limit 1`
      await tx`
        insert into storage_expected_objects (tenant_id, bucket, key, kind)
        values (${tenantId}, ${bucket!.name}, 'drill/expected', 'artifact')
        on conflict do nothing`
      // Lifecycle, projects, billing and notifications: what a released hold, a cancelled offboarding, a finished
      // deletion of another tenant, an erased account, a project member, a voided invoice and a watcher leave.
      const [project] = await tx<{ id: string }[]>`select id from projects where tenant_id = ${tenantId} limit 1`
      const [membership] = await tx<{ id: string }[]>`select id from memberships where tenant_id = ${tenantId} and user_id = ${userId}`
      await tx`
        insert into legal_holds (tenant_id, matter, reason, scope_kind, created_by, released_at, released_by)
        values (${tenantId}, 'drill matter', 'drill', 'tenant', ${userId}, now(), ${userId})`
      await tx`
        insert into tenant_offboarding_requests (tenant_id, state, requested_by, retention_days, window_ends_at, workflow_id, cancelled_by, cancelled_at)
        values (${tenantId}, 'cancelled', ${userId}, 30, now() + interval '30 days', 'tenant-offboarding/drill', ${userId}, now())`
      await tx`
        insert into tenant_deletion_jobs (tenant_id, status, trigger, phase, finished_at)
        values (gen_random_uuid(), 'succeeded', 'request', 'done', now())`
      await tx`insert into erased_addresses (address_hash, reusable_at) values (${randomBytes(32)}, now() + interval '30 days')`
      // A deleted tenant's tombstone and a destroyed credential's digest (migrations/0090).
      await tx`
        insert into tenant_tombstones (tenant_id, deletion_job_id, receipt_sha256)
        values (gen_random_uuid(), gen_random_uuid(), ${randomBytes(32).toString('hex')})`
      await tx`insert into retired_credentials (digest, reason, expires_at) values (${randomBytes(32)}, 'account_erased', now() + interval '30 days')`
      await tx`
        insert into project_members (tenant_id, project_id, membership_id, user_id, role)
        values (${tenantId}, ${project!.id}, ${membership!.id}, ${userId}, 'maintainer')`
      await tx`
        insert into invoices (tenant_id, subscription_id, period, period_start, period_end, usage_cutoff, plan_id, currency, lines, subtotal, total, hash, status)
        select ${tenantId}, id, '2020-01', '2020-01-01', '2020-02-01', '2020-02-01', plan_id, 'EUR', '[]', 0, 0, ${'0'.repeat(64)}, 'void'
          from subscriptions where tenant_id = ${tenantId}`
      await tx`insert into notification_watches (subject, user_id, tenant_id) values ('drill:watch', ${userId}, ${tenantId})`
      await tx`insert into notification_preferences (user_id, kind, mail) values (${userId}, 'audit_export.ready', true) on conflict do nothing`
    })
  } finally {
    await sql.end()
  }
}
