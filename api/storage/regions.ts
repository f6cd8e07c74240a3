import { z } from 'zod'
import type { Config } from '../platform/config'

const RegionConfig = z.object({
  id: z.string().regex(/^[a-z0-9-]{2,32}$/),
  name: z.string(),
  endpoint: z.string().url(),
  accessKey: z.string(),
  secretKey: z.string(),
  available: z.boolean().default(true),
})
export type Region = z.infer<typeof RegionConfig>

/** Regions come from configuration only: the local MinIO first, then STORAGE_REGIONS. */
export function regionsFromConfig(config: Config): Region[] {
  const extra = z.array(RegionConfig).parse(JSON.parse(config.STORAGE_REGIONS))
  const local: Region = { id: 'local', name: 'Local (MinIO)', endpoint: config.S3_ENDPOINT, accessKey: config.S3_ACCESS_KEY, secretKey: config.S3_SECRET_KEY, available: true }
  return [local, ...extra.filter((r) => r.id !== 'local')]
}
