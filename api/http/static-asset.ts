import { gzip } from 'node:zlib'
import { promisify } from 'node:util'

const gzipAsync = promisify(gzip)

/** Files smaller than this go as they are: gzip's header and the round trip through it would cost more than it saves. */
const COMPRESS_FROM_BYTES = 1024

/** Whether the client takes gzip: a `gzip` (or `*`) coding in Accept-Encoding without q=0. */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false
  return header.split(',').some((part) => {
    const [coding, ...params] = part
      .trim()
      .toLowerCase()
      .split(';')
      .map((s) => s.trim())
    if (coding !== 'gzip' && coding !== '*') return false
    const q = params.find((p) => p.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  })
}

/** A static file of one of our pages (the API reference, the console), with the page's CSP and the
 *  headers every such response carries. The file is opened once; Bun streams it anew for each response. A client
 *  that takes gzip gets the file compressed (on the thread pool, once per file and process, on first demand): the
 *  API reference's script is 1.7 MB as it is and about a quarter of that compressed. */
export const staticAsset = (file: string, type: string, cache: string, csp: string) => {
  const body = Bun.file(file)
  const headers = {
    'content-type': type,
    'cache-control': cache,
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  }
  let compressed: Promise<Uint8Array<ArrayBuffer> | null> | undefined
  const gzipped = () =>
    (compressed ??=
      body.size < COMPRESS_FROM_BYTES
        ? Promise.resolve(null)
        : body
            .bytes()
            .then((bytes) => gzipAsync(bytes, { level: 9 }))
            .then(
              (b) => new Uint8Array(b),
              () => null,
            ))
  return async (c?: { request: Request }): Promise<Response> => {
    const zipped = acceptsGzip(c?.request.headers.get('accept-encoding') ?? null) ? await gzipped() : null
    if (zipped) return new Response(zipped, { headers: { ...headers, 'content-encoding': 'gzip', vary: 'accept-encoding' } })
    return new Response(body, { headers: body.size < COMPRESS_FROM_BYTES ? headers : { ...headers, vary: 'accept-encoding' } })
  }
}

export const HTML = 'text/html; charset=utf-8'
export const JS = 'text/javascript; charset=utf-8'
export const CSS = 'text/css; charset=utf-8'
