import { ApiError } from './errors'

// Strong ETags are the row's monotonic version, never a body hash: two writes can't produce the same tag.
export const etagOf = (version: number): string => `"v${version}"`

/** One strong ETag of this API (`etagOf`), as If-Match names it. Its source is also the pattern the document states. */
export const STRONG_ETAG = /^"v([1-9][0-9]{0,15})"$/

export type IfMatch = { kind: 'any' } | { kind: 'version'; version: number }

/** undefined when the header is absent; throws IF_MATCH_INVALID when it is not one strong tag or `*`. */
export function parseIfMatch(header: string | null | undefined): IfMatch | undefined {
  if (header === null || header === undefined) return undefined
  const value = header.trim()
  if (value === '*') return { kind: 'any' }
  const m = STRONG_ETAG.exec(value)
  if (!m) throw new ApiError('IF_MATCH_INVALID', 'If-Match must be a single strong ETag previously returned by this API, or *')
  return { kind: 'version', version: Number(m[1]) }
}

/** The version an UPDATE must compare against, or null when any version is acceptable. */
export const expectedVersion = (ifMatch: IfMatch | undefined): number | null => (ifMatch?.kind === 'version' ? ifMatch.version : null)

/** 412 for a stale If-Match: the write did not happen. `what` names the resource to fetch again. */
export const staleVersion = (what = 'resource') =>
  new ApiError('PRECONDITION_FAILED', `If-Match does not match the current version; fetch the ${what} and retry`)
