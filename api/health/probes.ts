import { Connection } from '@temporalio/client'
import type { Config } from '../platform/config'

/** What /readyz asks besides Postgres: each answers true when the dependency responds. */
export function dependencyProbes(config: Config): Record<string, () => Promise<boolean>> {
  return {
    temporal: async () => {
      const conn = await Connection.connect({ address: config.TEMPORAL_ADDRESS, connectTimeout: 1500 })
      try {
        await conn.healthService.check({})
        return true
      } finally {
        await conn.close()
      }
    },
    s3: async () => (await fetch(new URL('/minio/health/live', config.S3_ENDPOINT), { signal: AbortSignal.timeout(1500) })).ok,
  }
}
