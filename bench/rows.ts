// The benchmark rows. bench/run.ts measures two baselines itself, before and after the rows: GET /bench/hello (Bun
// answering natively, no Elysia) and GET /bench/hello-elysia (an Elysia route on the same app, paying only the global
// hooks). Targets are fractions of the Elysia hello's requests/s. Add a row here; nothing else changes.

export interface Reply {
  status: number
  headers: Headers
  json: any
}

/** What a row's setup can use: the running API. `call` keeps no state; pass cookies and tokens yourself. */
export interface BenchContext {
  url: string
  call(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }): Promise<Reply>
}

export interface Row {
  name: string
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  headers?: Record<string, string>
  body?: unknown // sent as JSON on every request
  /** Runs once before the row is driven; the headers it returns are sent with every request. */
  setup?(ctx: BenchContext): Promise<Record<string, string>>
  /** The status every request must get (checked once before the run; wrk counts any non-2xx/3xx). Default 200. */
  expect?: number
  /** Minimum requests/s as a fraction of hello's; the runner prints PASS or MISS. Omit to only report. */
  target?: number
}

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`

/** A fresh user who owns a fresh tenant, and a personal access token in it — all through the public API. */
async function patHeaders(ctx: BenchContext): Promise<Record<string, string>> {
  const must = (r: Reply, status: number, what: string) => {
    if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.json)}`)
    return r
  }
  const reg = must(await ctx.call('POST', '/v1/users', { body: { email: `bench-${unique()}@example.test`, password: 'correct horse battery staple' } }), 201, 'register')
  const session = { cookie: reg.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': reg.json.data.session.csrfToken as string }
  must(await ctx.call('POST', '/v1/tenants', { headers: session, body: { name: 'Bench tenant', slug: `bench-${unique()}` } }), 201, 'create tenant')
  const pat = must(await ctx.call('POST', '/v1/api-keys', { headers: session, body: { name: 'bench', scopes: ['tenant:read'] } }), 201, 'create PAT')
  return { authorization: `Bearer ${pat.json.data.token}` }
}

export const rows: Row[] = [
  // The whole convention stack (request id, rate limit, error sets, envelope, response validation) on a public
  // route that touches no database.
  { name: 'GET /v1/storage-regions', method: 'GET', path: '/v1/storage-regions', target: 0.8 },
  // Elysia plus the global convention hooks, without macros or a response schema: separates framework cost from
  // the route-level conventions above.
  { name: 'GET /healthz', method: 'GET', path: '/healthz' },
  // Bearer authentication: PAT lookup in Postgres, tenant and principal budgets, last-used bookkeeping.
  { name: 'GET /v1/tokens/self (PAT)', method: 'GET', path: '/v1/tokens/self', setup: patHeaders },
]
