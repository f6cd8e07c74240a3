import { z } from 'zod'
import { hmac, sha256Hex } from './crypto'
import { macMatches, type DerivedKeys } from './keyring'
import { ApiError } from './errors'

export const PAGE_SIZE_DEFAULT = 25
export const PAGE_SIZE_MAX = 100

/** A page token as this API writes it: its payload and its MAC, base64url, joined by a dot. */
export const PAGE_TOKEN_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** Query fields every list takes. pageSize over the maximum is refused by openPage, not by the schema,
 *  so it answers PAGE_SIZE_TOO_LARGE instead of a generic VALIDATION_ERROR; the document states the maximum. */
export const PageQuery = z.object({
  pageSize: z.coerce.number().int().min(1).meta({ maximum: PAGE_SIZE_MAX }).optional(),
  // The shape openPage takes (payload.mac, both base64url); a token of that shape is still refused unless this API issued it.
  pageToken: z.string().min(1).max(2048).meta({ pattern: PAGE_TOKEN_SHAPE.source }).optional(),
})

/** What a page token is bound to: the route, the caller's scope (tenant or user) and every filter. */
export interface PageBinding {
  route: string
  scope: string
  filters: Record<string, unknown>
}

export interface PageRequest<C> {
  size: number
  after: C | null
}

const fingerprint = (b: PageBinding): string => {
  const filters = Object.keys(b.filters)
    .filter((k) => b.filters[k] !== undefined)
    .sort()
    .map((k) => [k, b.filters[k]])
  return sha256Hex(JSON.stringify([b.route, b.scope, filters])).slice(0, 32)
}

// Token: base64url(JSON {q, c}) "." base64url(HMAC). Opaque to clients, tamper-evident, bound to the query. Signed
// with the current key; one signed with an earlier key of the ring still opens until that key is removed.
export function pageTokenFor<C>(keys: DerivedKeys, binding: PageBinding, cursor: C): string {
  const payload = Buffer.from(JSON.stringify({ q: fingerprint(binding), c: cursor })).toString('base64url')
  return `${payload}.${hmac(keys.page, payload).toString('base64url')}`
}

export function openPage<C>(keys: DerivedKeys, binding: PageBinding, pageSize: number | undefined, pageToken: string | undefined): PageRequest<C> {
  const size = pageSize ?? PAGE_SIZE_DEFAULT
  if (size > PAGE_SIZE_MAX) throw new ApiError('PAGE_SIZE_TOO_LARGE', `pageSize must be at most ${PAGE_SIZE_MAX}`)
  if (pageToken === undefined) return { size, after: null }
  // The shape holds exactly two non-empty parts.
  const [payload, mac] = pageToken.split('.') as [string, string]
  if (!PAGE_TOKEN_SHAPE.test(pageToken) || !macMatches(keys, 'page', payload, Buffer.from(mac, 'base64url'))) {
    throw new ApiError('PAGE_TOKEN_INVALID', 'pageToken is not a token this API issued')
  }
  let decoded: { q?: unknown; c?: unknown }
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    throw new ApiError('PAGE_TOKEN_INVALID', 'pageToken is not a token this API issued')
  }
  if (decoded.q !== fingerprint(binding)) {
    throw new ApiError('PAGE_TOKEN_QUERY_MISMATCH', 'pageToken was issued for a different query; repeat the original filters or start over')
  }
  return { size, after: decoded.c as C }
}

/** Given rows fetched with LIMIT size+1, returns the page and the token for the next one (if any). */
function closePage<R, C>(keys: DerivedKeys, binding: PageBinding, rows: R[], size: number, cursorOf: (row: R) => C) {
  const items = rows.slice(0, size)
  const last = items[items.length - 1]
  const nextPageToken = rows.length > size && last !== undefined ? pageTokenFor(keys, binding, cursorOf(last)) : undefined
  return { items, nextPageToken }
}

export interface PageParams {
  pageSize?: number
  pageToken?: string
}

/** One page of a list, as a service returns it; routes wrap it with `page()` from http/envelope. */
export interface Page<T> {
  items: T[]
  nextPageToken: string | undefined
  pageSize: number
}

/** The one way a list is paged: opens the token against its binding, fetches one row more than the page (to learn
 *  whether another follows) after the token's cursor, and seals the next token from the last row shown. */
export async function paginate<C, R>(
  keys: DerivedKeys,
  binding: PageBinding,
  params: PageParams,
  fetch: (after: C | null, limit: number) => Promise<R[]>,
  cursorOf: (row: R) => C,
): Promise<Page<R>> {
  const req = openPage<C>(keys, binding, params.pageSize, params.pageToken)
  const rows = await fetch(req.after, req.size + 1)
  return { ...closePage(keys, binding, rows, req.size, cursorOf), pageSize: req.size }
}

/** The same page with its rows shown another way (as DTOs, say). */
export const mapPage = <R, T>(p: Page<R>, show: (row: R) => T): Page<T> => ({ ...p, items: p.items.map(show) })
