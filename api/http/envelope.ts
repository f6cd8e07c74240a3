import { z } from 'zod'
import { etagOf, expectedVersion, parseIfMatch } from '../platform/etag'
import type { Page } from '../platform/pagination'
import { stateOf } from './request-state'

const Meta = z.object({ requestId: z.string() })
const ListMeta = Meta.extend({ pageSize: z.number().int() })

/** `{ data, meta.requestId }`, as a model: validation, type and OpenAPI at once. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ data, meta: Meta })

export const listEnvelope = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), meta: ListMeta, nextPageToken: z.string().optional() })

export const ok = <T>(request: Request, data: T) => ({ data, meta: { requestId: stateOf(request).requestId } })

export function page<T>(request: Request, { items, pageSize, nextPageToken }: Page<T>) {
  return { data: items, meta: { requestId: stateOf(request).requestId, pageSize }, ...(nextPageToken ? { nextPageToken } : {}) }
}

/** The version a request's If-Match demands: null when absent or `*`; IF_MATCH_INVALID when malformed. */
export const ifMatchVersion = (request: Request): number | null => expectedVersion(parseIfMatch(request.headers.get('if-match')))

/** `ok` for a versioned resource: the body plus the strong ETag of the row version it shows. */
export function okVersioned<T>(request: Request, set: { headers: Record<string, unknown> }, version: number, data: T) {
  set.headers.etag = etagOf(version)
  return ok(request, data)
}
