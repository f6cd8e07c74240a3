// The one way to send a request to a tenant-supplied URL (OIDC discovery and tokens today, webhooks next).
// node:http(s) with a `lookup` that answers only the addresses checkUrl approved: the socket goes to the checked
// address (no second resolution for DNS rebinding to win), while SNI and certificate checks still use the URL's
// hostname. Bun 1.4 honours `lookup` (test/unit/outbound-guard.test.ts proves it). Redirects are never
// followed: a 3xx is handed back as it is, so a public URL cannot bounce the request inward.
import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { errorName, inSpan, SpanKind } from '../tracing'
import { checkUrl, type CheckedTarget } from './guard'
import type { OutboundPolicy } from './policy'

export type FailureReason = 'timeout' | 'too-large' | 'network' | 'aborted'

/** The destination was allowed but the exchange did not complete; `detail` is for the server's log only. */
export class OutboundFailed extends Error {
  constructor(
    readonly reason: FailureReason,
    readonly detail: string,
  ) {
    super(`outbound request failed: ${reason}`)
    this.name = 'OutboundFailed'
  }
}

export interface GuardedInit {
  method?: string
  headers?: Record<string, string>
  body?: string | Uint8Array
}

export interface GuardedOptions {
  policy: OutboundPolicy
  /** The whole exchange, connect to last body byte. */
  timeoutMs?: number
  maxBodyBytes?: number
  signal?: AbortSignal
}

export interface GuardedResponse {
  status: number
  headers: Headers
  body: Buffer
}

const DEFAULT_TIMEOUT_MS = 10_000
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

function pinnedLookup(addresses: CheckedTarget['addresses']): LookupFunction {
  const first = addresses[0]!
  return ((_hostname, options, callback) => {
    if (options.all) callback(null, addresses)
    else callback(null, first.address, first.family)
  }) as LookupFunction
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(raw)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v)
  }
  return headers
}

function requestOptions(target: CheckedTarget, init: GuardedInit, body: Buffer | undefined, policy: OutboundPolicy): https.RequestOptions {
  const tls = target.url.protocol === 'https:'
  return {
    hostname: target.hostname,
    port: target.url.port || (tls ? 443 : 80),
    path: `${target.url.pathname}${target.url.search}`,
    method: init.method ?? 'GET',
    headers: { ...init.headers, ...(body ? { 'content-length': String(body.byteLength) } : {}) },
    agent: false,
    lookup: pinnedLookup(target.addresses),
    ...(tls ? { ca: policy.ca, servername: isIP(target.hostname) ? undefined : target.hostname } : {}),
  }
}

export async function guardedFetch(url: string | URL, init: GuardedInit, opts: GuardedOptions): Promise<GuardedResponse> {
  const target = await checkUrl(url, opts.policy)
  if (opts.signal?.aborted) throw new OutboundFailed('aborted', target.hostname)
  // In a traced process, a client span (docs/operations.md "Traces"): the method, host and port, the status; never the path or
  // query (a webhook URL may hold a token in either) nor a header. No traceparent goes out: every URL here is a
  // tenant's, and our trace ids are not theirs to see.
  const method = init.method ?? 'GET'
  const tls = target.url.protocol === 'https:'
  return inSpan(
    `HTTP ${method}`,
    SpanKind.CLIENT,
    {
      'http.request.method': method,
      'server.address': target.hostname,
      'server.port': Number(target.url.port || (tls ? 443 : 80)),
    },
    (span) =>
      exchange(target, init, opts).then((res) => {
        span?.setAttribute('http.response.status_code', res.status)
        return res
      }),
    (err) => (err instanceof OutboundFailed ? err.reason : errorName(err)),
  )
}

function exchange(target: CheckedTarget, init: GuardedInit, opts: GuardedOptions): Promise<GuardedResponse> {
  const limit = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const body = init.body === undefined ? undefined : Buffer.from(init.body)
  const tls = target.url.protocol === 'https:'
  return new Promise<GuardedResponse>((resolve, reject) => {
    let settled = false
    const settle = () => {
      settled = true
      clearTimeout(timer)
      opts.signal?.removeEventListener('abort', onAbort)
    }
    const fail = (reason: FailureReason, detail: string) => {
      if (settled) return
      settle()
      req.destroy()
      reject(new OutboundFailed(reason, `${target.hostname}: ${detail}`))
    }
    const onAbort = () => fail('aborted', 'the caller gave up')
    const req = (tls ? https : http).request(requestOptions(target, init, body, opts.policy), (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > limit) fail('too-large', `body over ${limit} bytes`)
        else chunks.push(chunk)
      })
      res.on('error', (err) => fail('network', err.message))
      res.on('end', () => {
        if (settled) return
        settle()
        resolve({ status: res.statusCode ?? 0, headers: toHeaders(res.headers), body: Buffer.concat(chunks) })
      })
    })
    const timer = setTimeout(() => fail('timeout', `no complete answer in ${timeoutMs} ms`), timeoutMs)
    opts.signal?.addEventListener('abort', onAbort, { once: true })
    req.on('error', (err) => fail('network', err.message))
    req.end(body)
  })
}

type FetchBody = string | URLSearchParams | Uint8Array | ArrayBuffer | ReadableStream | null | undefined

function bytesOf(b: FetchBody): string | Uint8Array | undefined {
  if (b === null || b === undefined) return undefined
  if (typeof b === 'string' || b instanceof Uint8Array) return b
  if (b instanceof URLSearchParams) return b.toString()
  if (b instanceof ArrayBuffer) return new Uint8Array(b)
  throw new TypeError('guardedFetchApi sends string, form or byte bodies only') // openid-client sends no streams
}

/** A Fetch-API function over guardedFetch, for libraries that take one (openid-client's `customFetch`). */
export function guardedFetchApi(opts: Omit<GuardedOptions, 'signal'>) {
  return async (url: string, init: { method?: string; headers?: Record<string, string>; body?: FetchBody; signal?: AbortSignal | null }) => {
    const res = await guardedFetch(url, { method: init.method, headers: init.headers, body: bytesOf(init.body) }, { ...opts, signal: init.signal ?? undefined })
    const empty = res.status === 204 || res.status === 304 || init.method === 'HEAD'
    return new Response(empty ? null : new Uint8Array(res.body), { status: res.status, headers: res.headers })
  }
}
