// A deleted tenant's audit entries lose their personal part in batches of the job's own size (migrations/0100), not in
// one statement over all of them: a tenant with several batches of entries ends with every one blanked exactly once
// and its chain verifying, through a call killed between two batches and resumed by the next from the job's cursor,
// and through entries appended after the walk (a tail longer than a batch goes back to the step). At the activity
// level, under Temporal's mock activity context, so no worker process has to die.
import { describe, expect, test } from 'bun:test'
import { MockActivityEnvironment } from '@temporalio/testing'
import { DefaultLogger } from '@temporalio/worker'
import type { ActivityDeps } from '../../activities/deps'
import { tenantDeletionActivities } from '../../activities/tenant-deletion/activities'
import { verifyChain } from '../../api/audit/queries'
import { createLogger } from '../../api/platform/log'
import { auditBlankedKey, TABLE_STEPS } from '../../api/tenant-deletion/steps'
import type { DeletionProgress, TenantDeletionInput } from '../../workflows/contract-tenant-deletion'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { jobRow } from './helpers'

const BATCH = 50
const api = useApi()
const DAY = 86_400_000
const AUDIT_STEP = TABLE_STEPS.length
// The killed call's failure is the test's intent, not news.
const quiet = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') })

/** `n` entries of the tenant's chain with a whole personal part: an actor's address, a client address, a user agent,
 *  an invitee's address and a display name. */
async function entries(tenantId: string, n: number) {
  await api.sql`
    select audit_append(jsonb_populate_record(null::audit_log, jsonb_build_object(
      'id', gen_random_uuid(), 'chain', ${tenantId}::text, 'tenant_id', ${tenantId}::uuid, 'actor_type', 'user',
      'actor_id', gen_random_uuid()::text, 'actor_label', 'person' || i || '@example.com', 'action', 'api_key.created',
      'outcome', 'success', 'ip', '203.0.113.' || (i % 250), 'user_agent', 'agent ' || i,
      'details', jsonb_build_object('email', 'invitee' || i || '@example.com', 'n', i),
      'changes', jsonb_build_object('displayName', 'Name ' || i))))
      from generate_series(1, ${n}) i`
}

const personal = async (tenantId: string) => {
  const [r] = await api.sql<{ total: number; blanked: number; kept: number }[]>`
    select count(*)::int as total,
           count(*) filter (where personal_nonce is null and actor_label is null and ip is null and user_agent is null
                             and not details ? 'email' and not changes ? 'displayName' and details ? 'n')::int as blanked,
           count(*) filter (where personal_nonce is not null)::int as kept
      from audit_log where chain = ${tenantId}::text and actor_type = 'user'`
  return r!
}

describe("a deleted tenant's audit entries, blanked in batches", () => {
  test('more entries than a batch end blanked once each through a kill between batches, and the chain verifies', async () => {
    const config = { ...api.deps.config, TENANT_DELETION_BATCH_ROWS: BATCH }
    // The activities read only the pool, the configuration and the log here (no bucket was noted, no S3 is asked).
    const deps = { sql: api.sql, config, log: createLogger('silent', { service: 'test' }) } as unknown as ActivityDeps
    const activities = tenantDeletionActivities(deps)
    const [tenant] = await api.sql<{ id: string }[]>`
      insert into tenants (name, slug, lifecycle) values ('audit batches', ${`audit-batches-${crypto.randomUUID()}`}, 'deleting') returning id`
    const tenantId = tenant!.id
    await entries(tenantId, 4 * BATCH + 30)
    await sealAudit(api.sql)
    const [j] = await api.sql<{ id: string }[]>`
      insert into tenant_deletion_jobs (tenant_id, trigger, status, claim, phase, step_index)
      values (${tenantId}, 'request', 'running', 'audit-batches', 'rows', ${AUDIT_STEP}) returning id`
    const input: TenantDeletionInput = { tenantId, jobId: j!.id }
    const claim = 'audit-batches'

    // The first call dies after its second batch has committed (its heartbeat is where it stops).
    const first = quiet()
    let beats = 0
    first.on('heartbeat', (p: DeletionProgress) => {
      if (p.phase === 'rows' && p.stepIndex === AUDIT_STEP && ++beats === 2) throw new Error('worker killed')
    })
    await expect(first.run(activities.deleteTenantBatches, input, claim)).rejects.toThrow('worker killed')
    const killed = await jobRow(api.sql, j!.id)
    expect(killed.counts[auditBlankedKey]).toBe(2 * BATCH)
    expect(await personal(tenantId)).toEqual({ total: 4 * BATCH + 30, blanked: 2 * BATCH, kept: 2 * BATCH + 30 })
    // Nothing past the cursor is blanked, nothing before it kept.
    const [edge] = await api.sql<{ after: number; before: number }[]>`
      select count(*) filter (where seq > ${killed.audit_erased_through} and personal_nonce is null)::int as after,
             count(*) filter (where seq <= ${killed.audit_erased_through} and personal_nonce is not null)::int as before
        from audit_log where chain = ${tenantId}::text and actor_type = 'user'`
    expect(edge).toEqual({ after: 0, before: 0 })

    // The next call resumes from the committed cursor and walks to the end of the chain.
    const second = quiet()
    expect(await second.run(activities.deleteTenantBatches, input, claim)).toEqual({ phase: 'receipt', stepIndex: 0, blocked: null })
    expect(await personal(tenantId)).toEqual({ total: 4 * BATCH + 30, blanked: 4 * BATCH + 30, kept: 0 })

    // Entries appended after the walk, more than a batch of them: the receipt sends the job back to the step rather
    // than blank them all in its own commit; a short tail it blanks itself.
    await entries(tenantId, BATCH + 5)
    const receipt = quiet()
    expect(await receipt.run(activities.writeDeletionReceipt, input, claim)).toEqual({ phase: 'rows', stepIndex: AUDIT_STEP, blocked: null })
    expect(await receipt.run(activities.deleteTenantBatches, input, claim)).toEqual({ phase: 'receipt', stepIndex: 0, blocked: null })
    await entries(tenantId, 3)
    expect(await receipt.run(activities.writeDeletionReceipt, input, claim)).toEqual({ phase: 'done', stepIndex: 0, blocked: null })

    const total = 4 * BATCH + 30 + BATCH + 5 + 3
    expect(await personal(tenantId)).toEqual({ total, blanked: total, kept: 0 })
    const done = await jobRow(api.sql, j!.id)
    expect({ status: done.status, blanked: done.counts[auditBlankedKey] }).toEqual({ status: 'succeeded', blanked: total })
    await sealAudit(api.sql)
    const check = await verifyChain(api.sql, tenantId, new Date(Date.now() - DAY), new Date(Date.now() + DAY))
    expect(check.first_broken_seq).toBeNull()
    expect(check.verified).toBeGreaterThan(total)
  }, 120_000)
})
