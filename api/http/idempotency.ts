import { sha256Hex } from '../platform/crypto'
import { open, seal, type DerivedKeys } from '../platform/keyring'
import { ApiError } from '../platform/errors'
import type { Principal } from '../identity/service'

export const IDEMPOTENCY_HEADER = 'idempotency-key'
const MAX_KEY_LENGTH = 255

/** undefined when absent; throws IDEMPOTENCY_KEY_INVALID when present but unusable. */
export function parseIdempotencyKey(value: string | null): string | undefined {
  if (value === null) return undefined
  if (value.length === 0 || value.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(value)) {
    throw new ApiError('IDEMPOTENCY_KEY_INVALID', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters (a UUIDv4 is recommended)`)
  }
  return value
}

/** Keys of operations on tenant resources are unique per tenant, so a retry by any member finds the first answer.
 *  Operations on the caller's own account (its sessions, factors, current membership) pass `perUser`: two members
 *  who reuse a key must each get their own effect, never the other's stored response. A caller without a tenant
 *  uses their user; public operations use the operation (their bodies carry the secret that binds them). */
export function idempotencyScope(principal: Principal | null, operation: string, perUser = false): string {
  if (principal?.membership && !perUser) return `tenant:${principal.membership.tenantId}`
  if (principal) return `user:${principal.userId}`
  return `public:${operation}`
}

const stable = (v: unknown): string =>
  v === null || typeof v !== 'object'
    ? (JSON.stringify(v) ?? 'null')
    : Array.isArray(v)
      ? `[${v.map(stable).join(',')}]`
      : `{${Object.keys(v as object)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
          .join(',')}}`

/** Same operation, same path and same body (key order aside) make the same request. */
export const requestHash = (method: string, path: string, body: unknown): string => sha256Hex(`${method} ${path}\n${stable(body ?? null)}`)

// Stored responses may carry a session cookie or a one-time secret, so they are sealed at rest.
const REPLAYED_HEADERS = ['content-type', 'etag', 'location', 'set-cookie', 'retry-after']

export async function sealResponse(keys: DerivedKeys, res: Response): Promise<{ status: number; sealed: Buffer }> {
  const headers: [string, string][] = []
  res.headers.forEach((v, k) => {
    if (REPLAYED_HEADERS.includes(k)) headers.push([k, v])
  })
  const body = Buffer.from(await res.clone().arrayBuffer()).toString('base64')
  return { status: res.status, sealed: seal(keys, 'idempotency', JSON.stringify({ s: res.status, h: headers, b: body })) }
}

export function replayResponse(keys: DerivedKeys, sealed: Buffer, requestId: string): Response {
  const { s, h, b } = JSON.parse(open(keys, 'idempotency', sealed)) as { s: number; h: [string, string][]; b: string }
  const headers = new Headers(h)
  headers.set('x-request-id', requestId)
  headers.set('idempotent-replayed', 'true')
  return new Response(s === 204 ? null : Buffer.from(b, 'base64'), { status: s, headers })
}
