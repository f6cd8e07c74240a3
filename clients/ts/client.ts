// The SDK's client: openapi-fetch over the generated paths, with the conventions of the API as middleware (auth,
// Idempotency-Key), a retrying fetch below them (429/503) and every non-2xx thrown as an RcpError, so a call that
// returns has succeeded and its `data` is the success body's type.
import createClient, { type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch'
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers'
import { type Auth, bearer } from './auth'
import { errorOf } from './errors'
import { idempotencyKeys } from './idempotency'
import { defaultRetryPolicy, type RetryPolicy, retryingFetch } from './retry'
import type { paths } from './schema.gen'

export interface ClientOptions {
  /** The API's origin, e.g. https://rcp.example.com (paths start with /v1). */
  baseUrl: string
  auth?: Auth
  retry?: Partial<RetryPolicy>
  /** The fetch underneath (default globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>
}

export type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }]

type OperationOf<P extends keyof paths, M extends HttpMethod> = paths[P] extends { [K in M]: infer O }
  ? O extends Record<string | number, unknown>
    ? O
    : never
  : never

/** The success branch of openapi-fetch's answer: errors are thrown, never returned. */
export type Succeeded<M extends HttpMethod, P extends keyof paths, Init> = Extract<
  FetchResponse<OperationOf<P, M>, Init, `${string}/${string}`>,
  { error?: never }
>

type Method<M extends HttpMethod> = <P extends PathsWithMethod<paths, M>, Init extends MaybeOptionalInit<paths[P], M>>(
  url: P,
  ...init: InitParam<Init>
) => Promise<Succeeded<M, P, Init>>

export interface RcpClient {
  GET: Method<'get'>
  POST: Method<'post'>
  PUT: Method<'put'>
  PATCH: Method<'patch'>
  DELETE: Method<'delete'>
}

const throwErrors: Middleware = {
  async onResponse({ response }) {
    if (!response.ok) throw await errorOf(response)
    return undefined
  },
}

export function createRcpClient(options: ClientOptions): RcpClient {
  const policy: RetryPolicy = { ...defaultRetryPolicy, ...options.retry }
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: retryingFetch(base, policy) })
  // Middleware runs in order on the request and in reverse on the response: the session jar reads a response's
  // cookie before the error check throws, and the key is set before the retrying fetch clones the request.
  if (options.auth && 'token' in options.auth) client.use(bearer(options.auth.token))
  client.use(throwErrors)
  if (options.auth && 'session' in options.auth) client.use(options.auth.session.middleware())
  client.use(idempotencyKeys)
  return client as unknown as RcpClient
}
