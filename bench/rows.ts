// The rows of bench/run.ts: a row is one request driven by the load generator. The harness (bench/harness.ts) measures
// the ceiling (a bare Elysia hello in its own process) and the baselines below before and after the rows, in the same
// run; a row's target is a fraction of the ceiling unless it names another baseline. Add a row here; nothing else changes.

import { createDb } from '../api/platform/db'
import { BUN_HELLO_PATH, ELYSIA_HELLO_PATH } from './baselines'
import type { BenchContext, HttpRow, Reply } from './harness'

/** The hellos bench/api-entry.ts adds to the API, on its server: what the global hooks cost, and what Bun answers
 *  without a framework. */
export const appHello: HttpRow = { name: `GET ${ELYSIA_HELLO_PATH} (the app's Elysia, global hooks only)`, method: 'GET', path: ELYSIA_HELLO_PATH }
export const bunHello: HttpRow = { name: `GET ${BUN_HELLO_PATH} (Bun native, the app's server)`, method: 'GET', path: BUN_HELLO_PATH }

export const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
const SIGN_IN = { email: `bench-signin-${unique()}@example.test`, password: 'correct horse battery staple' }

/** A fresh user who owns a fresh tenant, and a personal access token in it — all through the public API. */
const patHeaders = async (ctx: BenchContext) => (await patIn(ctx, ['tenant:read'])).headers

export function must(r: Reply, status: number, what: string): Reply {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.json)}`)
  return r
}

/** A fresh user, signed in, who owns a fresh tenant (the session's current one): its cookie and CSRF headers. */
export async function ownerIn(ctx: BenchContext): Promise<{ session: Record<string, string>; tenantId: string }> {
  const reg = must(
    await ctx.call('POST', '/v1/users', { body: { email: `bench-${unique()}@example.test`, password: 'correct horse battery staple' } }),
    201,
    'register',
  )
  const session = { cookie: reg.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': reg.json.data.session.csrfToken as string }
  const tenant = must(
    await ctx.call('POST', '/v1/tenants', { headers: session, body: { name: 'Bench tenant', slug: `bench-${unique()}` } }),
    201,
    'create tenant',
  )
  return { session, tenantId: tenant.json.data.tenant.id }
}

/** The owner of a fresh tenant's personal access token with `scopes`, as an authorization header. */
export async function patIn(ctx: BenchContext, scopes: string[]): Promise<{ headers: Record<string, string>; tenantId: string }> {
  const { session, tenantId } = await ownerIn(ctx)
  const pat = must(await ctx.call('POST', '/v1/api-keys', { headers: session, body: { name: 'bench', scopes } }), 201, 'create PAT')
  return { headers: { authorization: `Bearer ${pat.json.data.token}` }, tenantId }
}

/** `count` members in the tenant (users and memberships by generate_series; a fifth of each role, every tenth
 *  disabled), analysed so the planner knows. In transactions of SEED_BATCH: each new membership bumps its
 *  (tenant, role, status) row of membership_counts (a per-row trigger), and within one transaction every bump of a
 *  row adds a version the next bump walks past, so one transaction of 100,000 costs quadratic time (minutes). */
const SEED_BATCH = 5000
export async function seedMembers(databaseUrl: string, tenantId: string, count = 100_000): Promise<void> {
  const sql = createDb(databaseUrl, { max: 1 })
  try {
    const tag = unique()
    for (let from = 1; from <= count; from += SEED_BATCH) {
      const to = Math.min(count, from + SEED_BATCH - 1)
      await sql`
        with u as (
          insert into users (email, display_name, password_hash)
          select 'member-' || ${tag} || '-' || i || '@example.test', 'Member ' || i, null from generate_series(${from}::int, ${to}::int) i
          returning id, email)
        insert into memberships (tenant_id, user_id, role, status, created_at)
        select ${tenantId}, u.id,
               (array['admin','researcher','billing_admin','viewer','viewer'])[1 + (n % 5)],
               case when n % 10 = 0 then 'disabled' else 'active' end,
               now() - make_interval(secs => n)
          from (select id, ${from - 1}::int + row_number() over () as n from u) u`
    }
    await sql`vacuum analyze memberships`
    await sql`analyze users`
  } finally {
    await sql.end()
  }
}

/** An owner's tenant:manage PAT in a tenant of 100,000 members. */
async function bigTenant(ctx: BenchContext): Promise<Record<string, string>> {
  const { headers, tenantId } = await patIn(ctx, ['tenant:read', 'tenant:manage'])
  await seedMembers(ctx.databaseUrl, tenantId)
  return headers
}

/** Password sign-in: one argon2id verification a request; bench/sign-in.ts reads it against bare argon2id. Its
 *  account is registered by the first row that signs in on an API (bench/audit.ts has two on one). */
export const signIn: HttpRow = {
  name: 'POST /v1/sessions (password)',
  method: 'POST',
  path: '/v1/sessions',
  body: SIGN_IN,
  expect: 201,
  setup: async (ctx) => {
    const reg = await ctx.call('POST', '/v1/users', { body: SIGN_IN })
    if (reg.status !== 201 && reg.json?.code !== 'EMAIL_ALREADY_REGISTERED') {
      throw new Error(`register: expected 201, got ${reg.status} ${JSON.stringify(reg.json)}`)
    }
    return {}
  },
}

/** The hot path (bench/README.md): a cached PAT, its budgets, the envelope. bench/run.ts drives it a second time
 *  against an API at the production default log level, its access log written to a file. */
export const tokensSelf: HttpRow = { name: 'GET /v1/tokens/self (PAT)', method: 'GET', path: '/v1/tokens/self', setup: patHeaders, target: 0.5, maxP99Ms: 5 }

/** The same read with a project-scoped PAT (issue 36): its project membership rides in the cached principal and its
 *  expiry is compared on every use. Read against the row above in the same run (within 5% is the aim). */
export const tokensSelfProject: HttpRow = {
  name: 'GET /v1/tokens/self (project PAT)',
  method: 'GET',
  path: '/v1/tokens/self',
  setup: async (ctx) => {
    const { session } = await ownerIn(ctx)
    const project = must(await ctx.call('POST', '/v1/projects', { headers: session, body: { name: 'Bench', slug: `bench-${unique()}` } }), 201, 'project')
    const body = { name: 'bench project', scopes: ['model:read'], projectId: project.json.data.id }
    const pat = must(await ctx.call('POST', '/v1/api-keys', { headers: session, body }), 201, 'create project PAT')
    return { authorization: `Bearer ${pat.json.data.token}` }
  },
  target: 0.5,
  maxP99Ms: 5,
}

export const rows: HttpRow[] = [
  // The whole convention stack (request id, rate limit, error sets, envelope, response validation) on a public
  // route that touches no database.
  { name: 'GET /v1/storage-regions', method: 'GET', path: '/v1/storage-regions', target: 0.8, targetOf: appHello.name },
  // Elysia plus the global convention hooks, without macros or a response schema: separates framework cost from
  // the route-level conventions above.
  { name: 'GET /healthz', method: 'GET', path: '/healthz' },
  // Bearer authentication: PAT lookup in Postgres, tenant and principal budgets, last-used bookkeeping.
  tokensSelf,
  tokensSelfProject,
  // A filtered page with meta.totalCount out of 100,000 members: the keyset page and the count, both by index.
  // The latency target is read at one connection (a client paging through); at 32 the p50 is mostly queueing.
  {
    name: 'GET /v1/tenants/current/memberships (100k, filtered, 1 conn)',
    method: 'GET',
    connections: 1,
    path: '/v1/tenants/current/memberships?role=viewer&status=active&pageSize=25',
    setup: bigTenant,
    maxP50Ms: 20,
  },
  {
    name: 'GET /v1/tenants/current/memberships (100k, filtered)',
    method: 'GET',
    path: '/v1/tenants/current/memberships?role=viewer&status=active&pageSize=25',
    setup: bigTenant,
  },
  // Reported only: the Elysia hello is the wrong yardstick for argon2id; bench/sign-in.ts has the right one.
  signIn,
]
