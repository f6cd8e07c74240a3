// The request context a service is given (api/identity/context.ts), as the auth macros build it from the request's
// state (api/http/request-state.ts requestContext): the tenant resolved once at admission, the request id and the
// trace id. Pure: no server, no database.
import { describe, expect, test } from 'bun:test'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { attachSpan, initState, requestContext } from '../../api/http/request-state'
import { activityContext, detachedContext, logIds, tenantOf } from '../../api/identity/context'
import type { Membership, Principal } from '../../api/identity/service'
import { ApiError } from '../../api/platform/errors'

const membership = (m: Partial<Membership> = {}): Membership => ({
  id: crypto.randomUUID(),
  tenantId: crypto.randomUUID(),
  role: 'owner',
  status: 'active',
  expiresAt: null,
  standing: { lifecycle: 'active', billingBlock: [] },
  ...m,
})

const principal = (m: Membership | null): Principal => ({
  credential: 'personal_access_token',
  credentialId: crypto.randomUUID(),
  userId: crypto.randomUUID(),
  label: 'token',
  membership: m,
  grantCeiling: ['tenant:read'],
  permissions: ['tenant:read'],
  expiresAt: new Date(Date.now() + 3_600_000),
  lastUsedAt: null,
  viaCookie: false,
  mfa: 'satisfied',
  authentication: null,
})

const request = () => new Request('http://api.test/v1/tokens/self', { headers: { 'x-request-id': 'req-ctx-1' } })

/** The code a refusal carries, or 'none' when nothing was thrown. */
function refusal(f: () => unknown): string {
  try {
    f()
    return 'none'
  } catch (err) {
    if (err instanceof ApiError) return err.code
    throw err
  }
}

describe('the tenant', () => {
  test('is the membership admitted with the request: a later change to the principal is not read again', () => {
    const m = membership()
    const p = principal(m)
    const ctx = requestContext(initState(request()), p)
    expect(ctx.membership).toBe(m)
    // Were the tenant re-derived from the principal, this would now be refused as disabled.
    p.membership = { ...m, status: 'disabled' }
    expect(tenantOf(ctx)).toBe(m)
  })

  test('a membership that is not usable is not admitted, and a service is refused with its reason', () => {
    const cases: [Membership | null, string][] = [
      [null, 'TENANT_REQUIRED'],
      [membership({ status: 'disabled' }), 'MEMBERSHIP_DISABLED'],
      [membership({ status: 'expired' }), 'MEMBERSHIP_EXPIRED'],
      [membership({ expiresAt: new Date(Date.now() - 1000) }), 'MEMBERSHIP_EXPIRED'],
      [membership({ status: 'removed' }), 'MEMBERSHIP_NOT_FOUND'],
    ]
    for (const [m, code] of cases) {
      const ctx = requestContext(initState(request()), principal(m))
      expect(ctx.membership).toBeNull()
      expect(refusal(() => tenantOf(ctx))).toBe(code)
    }
  })

  test('a membership that expires later is admitted', () => {
    const m = membership({ expiresAt: new Date(Date.now() + 3_600_000) })
    expect(requestContext(initState(request()), principal(m)).membership).toBe(m)
  })
})

describe('the request id and the trace id', () => {
  test('untraced: the request id, and no trace id', () => {
    const ctx = requestContext(initState(request()), principal(membership()))
    expect(ctx.requestId).toBe('req-ctx-1')
    expect(ctx.traceId).toBeNull()
    expect(logIds(ctx)).toEqual({ requestId: 'req-ctx-1' })
  })

  test("traced: the trace of the request's span, carried by a detached copy and by the log ids", () => {
    const req = request()
    const span = new BasicTracerProvider().getTracer('test').startSpan('GET')
    attachSpan(req, span)
    const ctx = requestContext(initState(req), principal(membership()))
    const traceId = span.spanContext().traceId
    expect(traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(ctx.traceId).toBe(traceId)
    const later = detachedContext(ctx)
    expect(later).toMatchObject({ requestId: 'req-ctx-1', traceId, membership: ctx.membership, principal: ctx.principal })
    expect(logIds(later)).toEqual({ requestId: 'req-ctx-1', trace_id: traceId })
    span.end()
  })

  test("an activity's context names its workflow, not a request", () => {
    const ctx = activityContext('webhook-delivery/abc')
    expect(ctx).toMatchObject({ principal: null, membership: null, requestId: null, traceId: null })
    expect(logIds(ctx)).toEqual({ workflowId: 'webhook-delivery/abc' })
  })
})
