// The storage meter's sample: every tenant's stored bytes, as the storage summary last computed them, written as
// one hour's byte-hours (and the peak) in one statement.
import { storedBytesByTenant } from '../api/storage/queries'
import { recordUsageBatch, type UsageEvent } from '../api/usage/record'
import { STORAGE_SAMPLE_EVERY_MS, type StorageSampleResult } from '../workflows/contract-usage'
import type { ActivityDeps } from './deps'

export function usageStorageActivities(deps: ActivityDeps) {
  const { sql, log } = deps
  return {
    /** Idempotent per hour: the keys name the hour, so a retried or repeated run within it adds nothing. An hour no
     *  run sampled (the worker down through it) is not metered: usage is never estimated upwards. */
    async sampleStorageUsage(): Promise<StorageSampleResult> {
      const hour = new Date(Math.floor(Date.now() / STORAGE_SAMPLE_EVERY_MS) * STORAGE_SAMPLE_EVERY_MS)
      const stored = await storedBytesByTenant(sql)
      const at = hour.toISOString()
      const events: UsageEvent[] = stored.flatMap(({ tenant_id: tenantId, bytes }) => [
        // Bytes held for one hour are that many byte-hours.
        { tenantId, projectId: null, meter: 'storage.byte_hours', quantity: BigInt(bytes), occurredAt: hour, idempotencyKey: `storage.byte_hours:${at}` },
        { tenantId, projectId: null, meter: 'storage.peak_bytes', quantity: BigInt(bytes), occurredAt: hour, idempotencyKey: `storage.peak_bytes:${at}` },
      ])
      const recorded = await recordUsageBatch(sql, events)
      log.info('storage usage sampled', { hour: at, tenants: stored.length, recorded })
      return { hour: at, tenants: stored.length, recorded }
    },
  }
}
