// A request that starts a workflow while Temporal cannot take it: 503 SERVICE_UNAVAILABLE with Retry-After, as
// problem+json, never a 500; what the request committed stands, and the same request succeeds once Temporal answers.
// (In the mixed-load bench a starved Temporal answered NamespaceNotFound, and builds were answered 500.)
import { afterAll, describe, expect, test } from 'bun:test'
import { isTemporalUnavailable, TemporalUnavailableError } from '../../api/platform/temporal'
import { NamespaceNotFoundError, ServiceError } from '@temporalio/client'
import { startApi, useApi, type TestApi } from '../support/api'
import { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'

const api = useApi()
let away: TestApi | undefined
afterAll(async () => {
  await away?.stop()
})

describe('Temporal unavailable', () => {
  test('a workflow start is answered 503 with Retry-After, and the same request succeeds once Temporal is back', async () => {
    away = await startApi({ TEMPORAL_ADDRESS: '127.0.0.1:1' })
    const owner = await tenantOwner(api.url)
    const { token } = await patFor(owner.client, ['tenant:read', 'tenant:manage'])
    const put = (base: string) => new Client(base).withBearer(token).call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local' } })

    const refused = await put(away.url)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('content-type')).toStartWith('application/problem+json')
    expect(refused.json).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)

    const retried = await put(api.url)
    expect(retried.status).toBe(200)
    expect(retried.json.data.bucket.status).toMatch(/^(provisioning|ready)$/)
  })

  test('what counts as unavailable: a failed connect, a starting server, UNAVAILABLE and DEADLINE_EXCEEDED; not the rest', () => {
    const grpc = (code: number) => Object.assign(new Error(`grpc ${code}`), { code, details: '', metadata: {} })
    expect(isTemporalUnavailable(new TemporalUnavailableError('down'))).toBe(true)
    expect(isTemporalUnavailable(new NamespaceNotFoundError('default'))).toBe(true)
    expect(isTemporalUnavailable(new ServiceError('start failed', { cause: grpc(14) }))).toBe(true)
    expect(isTemporalUnavailable(new ServiceError('start failed', { cause: grpc(4) }))).toBe(true)
    expect(isTemporalUnavailable(new ServiceError('start failed', { cause: grpc(3) }))).toBe(false) // INVALID_ARGUMENT
    expect(isTemporalUnavailable(new Error('Failed to connect before the deadline'))).toBe(false)
  })
})
