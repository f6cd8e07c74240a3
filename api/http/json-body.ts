import type { Config } from '../platform/config'
import { ApiError } from '../platform/errors'

const JSON_TYPE = /^application\/(.+\+)?json\b/i

/** The one body parser: JSON only, within the size limit. It runs only for requests that carry a body. */
export function jsonBodyParser(config: Pick<Config, 'MAX_BODY_BYTES'>) {
  const max = config.MAX_BODY_BYTES
  return async function parseJson({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> {
    const text = await request.text()
    // Content-Length was checked on arrival; a chunked body is only measurable once read.
    if (Buffer.byteLength(text) > max) throw new ApiError('BAD_REQUEST', `Request body exceeds ${max} bytes`)
    if (text.trim() === '') return {}
    if (!JSON_TYPE.test(contentType)) throw new ApiError('BAD_REQUEST', 'Request bodies must be JSON (Content-Type: application/json)')
    try {
      return JSON.parse(text)
    } catch {
      throw new ApiError('BAD_REQUEST', 'Request body is not valid JSON')
    }
  }
}
