import type { Config } from '../platform/config'
import { ApiError } from '../platform/errors'
import { refuseNulInBody } from './nul'

const JSON_TYPE = /^application\/(.+\+)?json\b/i

const tooLarge = (max: number) => new ApiError('BAD_REQUEST', `Request body exceeds ${max} bytes`)

async function readAtMost(request: Request, max: number): Promise<string> {
  if (!request.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength
    if (size > max) {
      void reader.cancel()
      throw tooLarge(max)
    }
    chunks.push(r.value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The one body parser: JSON only, within the size limit. It runs only for requests that carry a body. */
export function jsonBodyParser(config: Pick<Config, 'MAX_BODY_BYTES'>) {
  const max = config.MAX_BODY_BYTES
  return async function parseJson({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> {
    // Content-Length was checked on arrival; a chunked body is measured as it is read, and refused at the first byte
    // past the limit (the server's own hard limit sits far above it, for object uploads).
    const text = request.headers.has('content-length') ? await request.text() : await readAtMost(request, max)
    if (Buffer.byteLength(text) > max) throw tooLarge(max)
    // No body is null (undefined would hand the request to the next parser): a route whose model requires a body
    // answers VALIDATION_ERROR, as for any missing field, and an optional body is declared nullish.
    if (text.trim() === '') return null
    if (!JSON_TYPE.test(contentType)) throw new ApiError('BAD_REQUEST', 'Request bodies must be JSON (Content-Type: application/json)')
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new ApiError('BAD_REQUEST', 'Request body is not valid JSON')
    }
    refuseNulInBody(body)
    return body
  }
}
