// Every list of the API is keyset pages: { data: [...], nextPageToken? }. items() walks one to its end, asking for
// the next page only when the caller has taken the current one, with the same filters (the token is bound to them).
import type { RcpClient } from './client'
import type { ListPath } from './operations.gen'
import type { paths } from './schema.gen'

type ListOp<P extends ListPath> = paths[P]['get']
type Params<P extends ListPath> = ListOp<P> extends { parameters: infer Q } ? Q : never
type Query<P extends ListPath> = Params<P> extends { query?: infer Q } ? Omit<NonNullable<Q>, 'pageToken'> : never
export type ListItem<P extends ListPath> = ListOp<P> extends { responses: { 200: { content: { 'application/json': { data: (infer T)[] } } } } } ? T : never

/** What a list takes besides its page token: its path parameters (when it has any) and its query. */
export type ListInit<P extends ListPath> = {
  params?: Omit<Params<P>, 'query'> & { query?: Query<P> }
  headers?: Record<string, string>
}

type Page = { data: unknown[]; nextPageToken?: string }
type Get = (url: string, init: unknown) => Promise<{ data: Page }>

/** Each item of a list, page after page, following nextPageToken until a page has none. */
export async function* items<P extends ListPath>(client: RcpClient, path: P, init: ListInit<P> = {}): AsyncGenerator<ListItem<P>, void, undefined> {
  const get = client.GET as unknown as Get
  const params = (init.params ?? {}) as { query?: Record<string, unknown> }
  let pageToken: string | undefined
  do {
    const { data: page } = await get(path, { ...init, params: { ...params, query: { ...params.query, ...(pageToken ? { pageToken } : {}) } } })
    for (const item of page.data) yield item as ListItem<P>
    pageToken = page.nextPageToken
  } while (pageToken)
}
