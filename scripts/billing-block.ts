// `bun scripts/billing-block.ts <tenantId> block "<reason>"` or `… <tenantId> unblock`: the operator's billing block
// (docs/api.md "Billing"). A blocked tenant starts no new work whatever its subscription says, and a payment does not
// lift it; only this command does. Recorded in the tenant's audit trail as the system actor `operator:billing-block`,
// with billing.blocked / billing.unblocked events; every API replica evicts the tenant's cached tokens on commit.
import { setOperatorBlock } from '../api/billing/service'
import { activityContext } from '../api/identity/context'
import { loadConfig } from '../api/platform/config'
import { createDb } from '../api/platform/db'
import { isUuid } from '../api/platform/ids'

if (import.meta.main) {
  const [tenantId, action, ...reason] = process.argv.slice(2)
  if (!tenantId || !isUuid(tenantId) || (action !== 'block' && action !== 'unblock') || (action === 'block' && reason.join(' ').trim() === '')) {
    console.error('usage: bun scripts/billing-block.ts <tenantId> block "<reason>" | <tenantId> unblock')
    process.exit(2)
  }
  const config = loadConfig()
  const sql = createDb(config.DATABASE_URL, { max: 1, connectTimeoutSeconds: config.DATABASE_CONNECT_TIMEOUT_SECONDS })
  try {
    const row = await setOperatorBlock(
      sql,
      activityContext('operator:billing-block'),
      tenantId,
      action === 'block' ? { reason: reason.join(' ').trim() } : null,
    )
    console.log(`${tenantId}: operator block ${row.operator_blocked_at ? `on (${row.operator_block_reason})` : 'off'}; subscription ${row.status}`)
  } catch (err) {
    console.error(String((err as Error).message ?? err))
    process.exitCode = 1
  } finally {
    await sql.end({ timeout: 5 })
  }
}
