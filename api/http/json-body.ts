import type { Config } from '../platform/config'
import { ApiError } from '../platform/errors'
import { refuseNulInBody } from './nul'

const JSON_TYPE = /^application\/(.+\+)?json\b/i

/** The one body parser: JSON only, within the size limit. It runs only for requests that carry a body. */
export function jsonBodyParser(config: Pick<Config, 'MAX_BODY_BYTES'>) {
  const max = config.MAX_BODY_BYTES
  return async function parseJson({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> {
    const text = await request.text()
    // Content-Length was checked on arrival; a chunked body is only measurable once read.
    if (Buffer.byteLength(text) > max) throw new ApiError('BAD_REQUEST', `Request body exceeds ${max} bytes`)
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
