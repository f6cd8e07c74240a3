import { z } from 'zod'
import { stateOf } from './request-state'

const Meta = z.object({ requestId: z.string() })
const ListMeta = Meta.extend({ pageSize: z.number().int() })

/** `{ data, meta.requestId }`, as a model: validation, type and OpenAPI at once. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ data, meta: Meta })

export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), meta: ListMeta, nextPageToken: z.string().optional() })

export const ok = <T>(request: Request, data: T) => ({ data, meta: { requestId: stateOf(request).requestId } })

export function page<T>(request: Request, items: T[], pageSize: number, nextPageToken: string | undefined) {
  return { data: items, meta: { requestId: stateOf(request).requestId, pageSize }, ...(nextPageToken ? { nextPageToken } : {}) }
}
