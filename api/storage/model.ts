import { z } from 'zod'

export const StorageRegionDto = z.object({
  id: z.string(),
  name: z.string(),
  available: z.boolean(),
}).meta({ id: 'StorageRegionDto' })

export const StorageRegionsResponseDto = z.object({
  regions: z.array(StorageRegionDto),
  defaultRegionId: z.string(),
}).meta({ id: 'StorageRegionsResponseDto' })
