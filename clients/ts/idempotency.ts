// An Idempotency-Key on every operation the document says takes one, set before the retrying fetch clones the
// request, so every retry of one call carries the same key and the API applies the call once.
import type { Middleware } from 'openapi-fetch'
import { idempotentOperations } from './operations.gen'

export const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (!idempotentOperations.has(`${request.method} ${schemaPath}`) || request.headers.has('idempotency-key')) return undefined
    request.headers.set('Idempotency-Key', crypto.randomUUID())
    return request
  },
}
