import { z } from 'zod'
import { STRONG_ETAG, etagOf, expectedVersion, parseIfMatch } from '../platform/etag'
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

/** The If-Match header of an operation that refuses a change without one (IF_MATCH_INVALID), as an OpenAPI parameter:
 *  one strong ETag, `*` not taken. Stated so a generated client sends it, and a fuzzer does not leave it out. */
export const IF_MATCH_REQUIRED = {
  in: 'header',
  name: 'If-Match',
  required: true,
  schema: { type: 'string', pattern: STRONG_ETAG.source },
  description: 'The ETag of the resource as you read it; a stale one is 412 PRECONDITION_FAILED',
} as const

/** `ok` for a versioned resource: the body plus the strong ETag of the row version it shows. */
export function okVersioned<T>(request: Request, set: { headers: Record<string, unknown> }, version: number, data: T) {
  set.headers.etag = etagOf(version)
  return ok(request, data)
}
