import { z } from 'zod'
import type { Config } from '../platform/config'
import { ApiError } from '../platform/errors'

/** What a region id looks like (the local region's `local` too). */
export const REGION_ID_PATTERN = '^[a-z0-9-]{2,32}$'

const RegionConfig = z.object({
  id: z.string().regex(new RegExp(REGION_ID_PATTERN)),
  name: z.string(),
  endpoint: z.string().url(),
  // Empty keys: the region is announced but nobody gave us credentials for it yet.
  accessKey: z.string().default(''),
  secretKey: z.string().default(''),
  available: z.boolean().default(true),
})
export type Region = z.infer<typeof RegionConfig>

/** Regions come from configuration only: the local MinIO first, then STORAGE_REGIONS. */
export function regionsFromConfig(config: Config): Region[] {
  const extra = z.array(RegionConfig).parse(JSON.parse(config.STORAGE_REGIONS))
  const local: Region = {
    id: 'local',
    name: 'Local (MinIO)',
    endpoint: config.S3_ENDPOINT,
    accessKey: config.S3_ACCESS_KEY,
    secretKey: config.S3_SECRET_KEY,
    available: true,
  }
  return [local, ...extra.filter((r) => r.id !== 'local')]
}

/** The region a tenant may provision into: known, marked available, and with credentials. */
export function usableRegion(config: Config, regionId: string): Region {
  const region = regionsFromConfig(config).find((r) => r.id === regionId)
  if (!region?.available) throw new ApiError('STORAGE_REGION_NOT_AVAILABLE', `Storage region "${regionId}" is not available`)
  if (!region.accessKey || !region.secretKey) {
    throw new ApiError('STORAGE_PROVIDER_NOT_CONFIGURED', `Storage region "${regionId}" has no storage credentials configured`)
  }
  return region
}
