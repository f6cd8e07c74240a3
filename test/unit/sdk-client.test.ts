// The TypeScript SDK's hand-written layer (clients/ts) against a local stand-in server: which answers it retries and
// how, the Idempotency-Key it adds and keeps, the pages it follows, the errors it throws, the session and the ETags.
// The same client against the real platform: test/clients/ts-sdk.test.ts.
import { afterAll, describe, expect, test } from 'bun:test'
import { createRcpClient, ifMatch, items, RcpError, read, SessionJar } from '../../clients/ts'

type Seen = { method: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: string }
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A server answering each request with the next of `answers` (the last one repeats), recording what it received. */
function stub(answers: ((seen: Seen) => Response)[]) {
  const seen: Seen[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url)
      const s = {
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers.toJSON(),
        body: await req.text(),
      }
      seen.push(s)
      return answers[Math.min(seen.length - 1, answers.length - 1)]!(s)
    },
  })
  servers.push(server)
  return { url: `http://127.0.0.1:${server.port}`, seen }
}
const servers: ReturnType<typeof Bun.serve>[] = []
afterAll(() => {
  for (const s of servers) s.stop(true)
})

const problem =
  (status: number, code: string, headers: Record<string, string> = {}) =>
  () =>
    new Response(
      JSON.stringify({ type: `https://rcp.example/problems/${code}`, title: code, status, code, message: `${code} happened`, requestId: `req_${code}` }),
      {
        status,
        headers: { 'content-type': 'application/problem+json', 'x-request-id': `req_${code}`, ...headers },
      },
    )
const ok =
  (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
const created = ok({ data: { id: 'prj_1' }, meta: { requestId: 'r' } }, 201)

/** A client whose waits are recorded, not slept. */
function client(url: string, extra: Partial<Parameters<typeof createRcpClient>[0]> = {}) {
  const waits: number[] = []
  const rcp = createRcpClient({ baseUrl: url, auth: { token: 'rcp_pat_test' }, retry: { sleep: async (ms) => waits.push(ms) }, ...extra })
  return { rcp, waits }
}

const createProject = (rcp: ReturnType<typeof client>['rcp']) => rcp.POST('/v1/projects', { body: { name: 'Arm', slug: 'arm' } })

describe('retries', () => {
  test('a 429 is retried after its Retry-After with the same Idempotency-Key, a UUIDv4 the client made', async () => {
    const s = stub([problem(429, 'RATE_LIMITED', { 'retry-after': '3' }), created])
    const { rcp, waits } = client(s.url)
    const { data } = await createProject(rcp)
    expect(data.data).toEqual({ id: 'prj_1' } as never)
    expect(s.seen).toHaveLength(2)
    const keys = s.seen.map((r) => r.headers['idempotency-key'])
    expect(keys[0]).toMatch(UUID_V4)
    expect(keys[1]).toBe(keys[0])
    expect(s.seen[1]!.body).toBe(s.seen[0]!.body)
    expect(waits).toEqual([3000])
  })

  test('each call has its own key; a key the caller set is kept; an operation that takes none gets none', async () => {
    const s = stub([created])
    const { rcp } = client(s.url)
    await createProject(rcp)
    await createProject(rcp)
    await rcp.POST('/v1/projects', { body: { name: 'Arm', slug: 'arm' }, headers: { 'Idempotency-Key': 'mine-1' } })
    await rcp.POST('/v1/api-keys', { body: { name: 'ci', scopes: ['model:read'] } })
    const keys = s.seen.map((r) => r.headers['idempotency-key'])
    expect(keys[0]).not.toBe(keys[1])
    expect(keys[2]).toBe('mine-1')
    expect(keys[3]).toBeUndefined()
  })

  test('a 500 is not retried: thrown at once', async () => {
    const s = stub([problem(500, 'INTERNAL_ERROR'), created])
    const { rcp, waits } = client(s.url)
    const err = await createProject(rcp).catch((e) => e)
    expect(err).toBeInstanceOf(RcpError)
    expect([err.status, err.code]).toEqual([500, 'INTERNAL_ERROR'])
    expect(s.seen).toHaveLength(1)
    expect(waits).toEqual([])
  })

  test('a 503 is retried on a GET and on a keyed POST, never on a POST without a key (it may have started work)', async () => {
    const get = stub([problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '2' }), ok({ data: { id: 'u' }, meta: { requestId: 'r' } })])
    await client(get.url).rcp.GET('/v1/users/me')
    expect(get.seen).toHaveLength(2)

    const keyed = stub([problem(503, 'SERVICE_UNAVAILABLE'), created])
    const { rcp, waits } = client(keyed.url)
    await createProject(rcp)
    expect(keyed.seen).toHaveLength(2)
    expect(keyed.seen[1]!.headers['idempotency-key']).toBe(keyed.seen[0]!.headers['idempotency-key']!)
    // No Retry-After: a jittered backoff under the base delay.
    expect(waits).toHaveLength(1)
    expect(waits[0]).toBeLessThan(250)

    const unkeyed = stub([problem(503, 'SERVICE_UNAVAILABLE'), created])
    const err = await client(unkeyed.url)
      .rcp.POST('/v1/model-versions/{modelVersionId}/edge-inference-package', { params: { path: { modelVersionId: 'mv_1' } }, body: {} as never })
      .catch((e) => e)
    expect([err.status, unkeyed.seen.length]).toEqual([503, 1])
  })

  test('an answer the API replayed from its idempotency store is final; a Retry-After beyond the limit ends the retries', async () => {
    const replayed = stub([problem(503, 'SERVICE_UNAVAILABLE', { 'idempotent-replayed': 'true', 'retry-after': '1' }), created])
    expect((await createProject(client(replayed.url).rcp).catch((e) => e)).status).toBe(503)
    expect(replayed.seen).toHaveLength(1)

    const far = stub([problem(429, 'RATE_LIMITED', { 'retry-after': '120' }), created])
    const { rcp, waits } = client(far.url, { retry: { maxDelayMs: 60_000, sleep: async (ms) => void waits.push(ms) } })
    expect((await createProject(rcp).catch((e) => e)).code).toBe('RATE_LIMITED')
    expect([far.seen.length, waits.length]).toEqual([1, 0])
  })

  test('retries stop after the policy: the last refusal is thrown', async () => {
    const s = stub([problem(429, 'RATE_LIMITED', { 'retry-after': '1' })])
    const { rcp, waits } = client(s.url, { retry: { retries: 2, sleep: async (ms) => void waits.push(ms) } })
    expect((await rcp.GET('/v1/users/me').catch((e) => e)).code).toBe('RATE_LIMITED')
    expect([s.seen.length, waits]).toEqual([3, [1000, 1000]])
  })
})

describe('pages, errors, session and ETags', () => {
  test('items() walks three pages by nextPageToken, keeping the filters, and stops at the page without one', async () => {
    const page = (ids: string[], next?: string) =>
      ok({ data: ids.map((id) => ({ id })), meta: { requestId: 'r', pageSize: 2 }, ...(next ? { nextPageToken: next } : {}) })
    const s = stub([page(['a', 'b'], 'tok1'), page(['c', 'd'], 'tok2'), page(['e'])])
    const { rcp } = client(s.url)
    const seen: string[] = []
    for await (const m of items(rcp, '/v1/tenants/current/memberships', { params: { query: { pageSize: 2, role: 'viewer' } } })) seen.push(m.id)
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(s.seen.map((r) => r.query)).toEqual([
      { pageSize: '2', role: 'viewer' },
      { pageSize: '2', role: 'viewer', pageToken: 'tok1' },
      { pageSize: '2', role: 'viewer', pageToken: 'tok2' },
    ])
  })

  test('a problem+json answer is an RcpError with status, code, requestId and the fields it names', async () => {
    const body = {
      type: 'https://rcp.example/problems/validation-error',
      title: 'Validation failed',
      status: 400,
      code: 'VALIDATION_ERROR',
      message: 'slug: invalid',
      requestId: 'req_abc',
      errors: [{ path: 'slug', message: 'invalid' }],
    }
    const s = stub([
      () => new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/problem+json', 'x-request-id': 'req_abc' } }),
    ])
    const err = await createProject(client(s.url).rcp).catch((e) => e)
    expect(err).toBeInstanceOf(RcpError)
    expect(err).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      requestId: 'req_abc',
      message: 'slug: invalid',
      errors: [{ path: 'slug', message: 'invalid' }],
    })
    // Not problem+json (a proxy's page): the status speaks, the request id comes from the header.
    const bare = stub([() => new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html', 'x-request-id': 'req_px' } })])
    expect(
      await client(bare.url)
        .rcp.GET('/v1/users/me')
        .catch((e) => e),
    ).toMatchObject({ status: 502, code: 'HTTP_502', requestId: 'req_px' })
  })

  test('read() returns the ETag and ifMatch() sends it', async () => {
    const s = stub([
      ok({ data: { id: 'prj_1', name: 'Arm' }, meta: { requestId: 'r' } }, 200, { etag: '"v3"' }),
      ok({ data: { id: 'prj_1' }, meta: { requestId: 'r' } }),
    ])
    const { rcp } = client(s.url)
    const { data, etag } = await read(rcp, '/v1/projects/{projectId}', { params: { path: { projectId: 'prj_1' } } })
    expect([data.data.id, etag]).toEqual(['prj_1', '"v3"'])
    await rcp.PATCH('/v1/projects/{projectId}', { params: { path: { projectId: 'prj_1' } }, body: { name: 'Arm 2' }, headers: ifMatch(etag) })
    expect(s.seen[1]!.headers['if-match']).toBe('"v3"')
  })

  test('a session keeps the cookie a sign-in sets and sends its CSRF token on writes only; sign-out clears it', async () => {
    const signIn = () =>
      new Response(JSON.stringify({ data: { session: { csrfToken: 'csrf-1' } }, meta: { requestId: 'r' } }), {
        status: 201,
        headers: { 'content-type': 'application/json', 'set-cookie': 'rcp_session=rcp_ses_abc; Path=/; HttpOnly; SameSite=Lax' },
      })
    const signOut = () => new Response(null, { status: 204, headers: { 'set-cookie': 'rcp_session=; Path=/; Max-Age=0' } })
    const s = stub([signIn, ok({ data: {}, meta: { requestId: 'r' } }), created, signOut, ok({ data: {}, meta: { requestId: 'r' } })])
    const session = new SessionJar()
    const rcp = createRcpClient({ baseUrl: s.url, auth: { session } })
    await rcp.POST('/v1/sessions', { body: { email: 'a@example.test', password: 'pw' } })
    await rcp.GET('/v1/users/me')
    await createProject(rcp)
    await rcp.DELETE('/v1/sessions/current')
    expect(session.signedIn).toBe(false)
    await rcp.GET('/v1/users/me')
    const sent = s.seen.map((r) => [r.headers.cookie ?? null, r.headers['x-csrf-token'] ?? null])
    expect(sent).toEqual([
      [null, null],
      ['rcp_session=rcp_ses_abc', null],
      ['rcp_session=rcp_ses_abc', 'csrf-1'],
      ['rcp_session=rcp_ses_abc', 'csrf-1'],
      [null, null],
    ])
  })
})
