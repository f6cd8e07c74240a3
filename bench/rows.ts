// The benchmark rows. bench/run.ts measures two baselines itself, before and after the rows: GET /bench/hello (Bun
// answering natively, no Elysia) and GET /bench/hello-elysia (an Elysia route on the same app, paying only the global
// hooks). Targets are fractions of the Elysia hello's requests/s. Add a row here; nothing else changes.

import { createDb } from '../api/platform/db'

export interface Reply {
  status: number
  headers: Headers
  json: any
}

/** What a row's setup can use: the running API. `call` keeps no state; pass cookies and tokens yourself. */
export interface BenchContext {
  url: string
  /** The bench database, for setups that seed volume no API could create in reasonable time. */
  databaseUrl: string
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
  /** Concurrent connections for this row (default: the run's --connections). */
  connections?: number
  /** Minimum requests/s as a fraction of hello's; the runner prints PASS or MISS. Omit to only report. */
  target?: number
  /** Latency ceilings (ms) judged with target: PASS needs all of them. */
  maxP50Ms?: number
  maxP99Ms?: number
}

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
const SIGN_IN = { email: `bench-signin-${unique()}@example.test`, password: 'correct horse battery staple' }

/** A fresh user who owns a fresh tenant, and a personal access token in it — all through the public API. */
const patHeaders = async (ctx: BenchContext) => (await patIn(ctx, ['tenant:read'])).headers

async function patIn(ctx: BenchContext, scopes: string[]): Promise<{ headers: Record<string, string>; tenantId: string }> {
  const must = (r: Reply, status: number, what: string) => {
    if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.json)}`)
    return r
  }
  const reg = must(await ctx.call('POST', '/v1/users', { body: { email: `bench-${unique()}@example.test`, password: 'correct horse battery staple' } }), 201, 'register')
  const session = { cookie: reg.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': reg.json.data.session.csrfToken as string }
  const tenant = must(await ctx.call('POST', '/v1/tenants', { headers: session, body: { name: 'Bench tenant', slug: `bench-${unique()}` } }), 201, 'create tenant')
  const pat = must(await ctx.call('POST', '/v1/api-keys', { headers: session, body: { name: 'bench', scopes } }), 201, 'create PAT')
  return { headers: { authorization: `Bearer ${pat.json.data.token}` }, tenantId: tenant.json.data.tenant.id }
}

/** An owner's tenant:manage PAT in a tenant of 100,000 members (users and memberships by generate_series; a fifth
 *  of each role, every tenth disabled), analysed so the planner knows. */
async function bigTenant(ctx: BenchContext): Promise<Record<string, string>> {
  const { headers, tenantId } = await patIn(ctx, ['tenant:read', 'tenant:manage'])
  const sql = createDb(ctx.databaseUrl, { max: 1 })
  try {
    const tag = unique()
    await sql`
      with u as (
        insert into users (email, display_name, password_hash)
        select 'member-' || ${tag} || '-' || i || '@example.test', 'Member ' || i, null from generate_series(1, 100000) i
        returning id, email)
      insert into memberships (tenant_id, user_id, role, status, created_at)
      select ${tenantId}, u.id,
             (array['admin','researcher','billing_admin','viewer','viewer'])[1 + (n % 5)],
             case when n % 10 = 0 then 'disabled' else 'active' end,
             now() - make_interval(secs => n)
        from (select id, row_number() over () as n from u) u`
    await sql`vacuum analyze memberships`
    await sql`analyze users`
  } finally {
    await sql.end()
  }
  return headers
}

export const rows: Row[] = [
  // The whole convention stack (request id, rate limit, error sets, envelope, response validation) on a public
  // route that touches no database.
  { name: 'GET /v1/storage-regions', method: 'GET', path: '/v1/storage-regions', target: 0.8 },
  // Elysia plus the global convention hooks, without macros or a response schema: separates framework cost from
  // the route-level conventions above.
  { name: 'GET /healthz', method: 'GET', path: '/healthz' },
  // Bearer authentication: PAT lookup in Postgres, tenant and principal budgets, last-used bookkeeping.
  { name: 'GET /v1/tokens/self (PAT)', method: 'GET', path: '/v1/tokens/self', setup: patHeaders, target: 0.5, maxP99Ms: 5 },
  // A filtered page with meta.totalCount out of 100,000 members: the keyset page and the count, both by index.
  // The latency target is read at one connection (a client paging through); at 32 the p50 is mostly queueing.
  {
    name: 'GET /v1/tenants/current/memberships (100k, filtered, 1 conn)', method: 'GET', connections: 1,
    path: '/v1/tenants/current/memberships?role=viewer&status=active&pageSize=25', setup: bigTenant, maxP50Ms: 20,
  },
  {
    name: 'GET /v1/tenants/current/memberships (100k, filtered)', method: 'GET',
    path: '/v1/tenants/current/memberships?role=viewer&status=active&pageSize=25', setup: bigTenant,
  },
  // Password sign-in: one argon2id verification a request, so hello is the wrong yardstick; bench/sign-in.ts compares
  // it with bare argon2id on the same cores (target ≥ 90%). Here it is only reported.
  {
    name: 'POST /v1/sessions (password)', method: 'POST', path: '/v1/sessions', body: SIGN_IN, expect: 201,
    setup: async (ctx) => {
      const reg = await ctx.call('POST', '/v1/users', { body: SIGN_IN })
      if (reg.status !== 201) throw new Error(`register: expected 201, got ${reg.status} ${JSON.stringify(reg.json)}`)
      return {}
    },
  },
]
