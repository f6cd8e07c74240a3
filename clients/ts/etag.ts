// Optimistic concurrency: a read hands back the resource's ETag ("v<version>"), a change sends it as If-Match and is
// refused with 412 PRECONDITION_FAILED when someone changed the resource in between.
import type { MaybeOptionalInit } from 'openapi-fetch'
import type { PathsWithMethod } from 'openapi-typescript-helpers'
import type { InitParam, RcpClient, Succeeded } from './client'
import type { paths } from './schema.gen'

/** The ETag of a response, or an error naming the operation: a helper that sends nothing would silently skip the check. */
export function etagOf(response: Response): string {
  const tag = response.headers.get('etag')
  if (!tag) throw new TypeError(`${response.url} answered without an ETag`)
  return tag
}

/** The header a conditional change sends. */
export const ifMatch = (etag: string): { 'If-Match': string } => ({ 'If-Match': etag })

/** GET a resource with its ETag: `{ data, etag }`. */
export async function read<P extends PathsWithMethod<paths, 'get'>, Init extends MaybeOptionalInit<paths[P], 'get'>>(
  client: RcpClient,
  url: P,
  ...init: InitParam<Init>
): Promise<{ data: Succeeded<'get', P, Init>['data']; etag: string }> {
  const { data, response } = await (client.GET as (...a: unknown[]) => Promise<{ data: never; response: Response }>)(url, ...init)
  return { data, etag: etagOf(response) }
}
