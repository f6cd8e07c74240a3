import type { Config } from '../platform/config'
import type { TemporalClient } from '../platform/temporal'

/** What /readyz asks besides Postgres: each answers true when the dependency responds. Temporal is asked on the
 *  process's own client, so a probe opens no connection of its own. */
export function dependencyProbes(config: Config, temporal: TemporalClient): Record<string, () => Promise<boolean>> {
  return {
    temporal: async () => {
      const client = await temporal.get()
      await client.connection.withDeadline(Date.now() + 1500, () => client.workflowService.getSystemInfo({}))
      return true
    },
    s3: async () => (await fetch(new URL('/minio/health/live', config.S3_ENDPOINT), { signal: AbortSignal.timeout(1500) })).ok,
  }
}
