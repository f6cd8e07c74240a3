// Schemathesis (PyPI) holds the whole published contract: it fuzzes every operation of /v1/openapi.json against a
// real API process with seeded principals and fails on any server error, any response that does not match its
// documented status, schema, headers or content type, and any schema-violating request that is accepted.
// Bounded for the test command; a deeper run: RCP_FUZZ_EXAMPLES=200 RCP_FUZZ_SECONDS=900 ./scripts/test test/contract
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PERMISSIONS } from '../../api/identity/permissions'
import { freePort, REPO_ROOT, spawnChild, tail, waitUntil, type Child } from '../../scripts/platform'
import { Client } from '../support/client'
import { PASSWORD, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { FUZZ_MODEL_KEY, seedResetGrants, seedTenant, seededOperations } from './fuzz-seed'

const EXAMPLES = Number(process.env.RCP_FUZZ_EXAMPLES ?? 12)
const SECONDS = Number(process.env.RCP_FUZZ_SECONDS ?? 75)
/** The stateful phase's scenarios (create, then follow the document's links): enough to hold its share of the time. */
const STATEFUL_SCENARIOS = EXAMPLES * 20
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
  'unsupported_method',
  'allow_header_conformance',
]

const REJECTIONS = ['400', '401', '403', '404', '405', '406', '409', '415', '422', '428', '429', '431', '5xx']

/** Operations that would end the fuzzer's own credential, so everything after them would only test a 401. */
const ENDS_OWN_CREDENTIAL = [
  'DELETE /v1/sessions/current', // ends the cookie session
  'POST /v1/sessions/bulk-invalidation-requests', // ends every session, this one included
  'DELETE /v1/api-keys/{apiKeyId}', // may revoke the fuzzer's own token (its id is in the list responses)
  'POST /v1/api-keys/memberships/{membershipId}/revocations', // revokes every token of the fuzzer's membership
  // The document says a change names at least one field, so the fuzzer sends one: an expiresAt or status disabled on
  // its own membership (its id is in the list responses) ends every credential of it.
  'PATCH /v1/tenants/current/memberships/{membershipId}',
  // Its own membership's id is in the list responses, which the fuzzer reuses: removed, every credential of it ends.
  'DELETE /v1/tenants/current/memberships/{membershipId}',
  // Erases the fuzzer's own account: a session that signed in minutes ago may (a PAT gets 403). Once the cookie pass got
  // past made-up bearer tokens it did so 34 s in, and every later request met 401 TOKEN_NOT_FOUND.
  'DELETE /v1/users/me',
]
/** Left out of the cookie pass only: an auth policy that requires MFA or SSO would hold the session at the gate, and a
 *  new tenant moves the session out of the seeded tenant (POST /v1/tenants lands a session in the tenant it made, as
 *  the console expects; a PAT stays where it is). The cookie pass once made a tenant 6 s in and spent the rest in an
 *  empty one: 49 operations met only 404 and 3 of 45 links were covered, against 18 for the PAT. Without a second
 *  tenant, a membership switch can only name the session's own membership (a valid case does: schemathesis_hooks.py). */
const GATES_OWN_SESSION = ['PATCH /v1/tenants/current/auth-policy', 'POST /v1/tenants']

const HOOKS = join(REPO_ROOT, 'test', 'contract', 'schemathesis_hooks.py')

let api: Child
let base = ''
/** The fuzzer's executable, installed (once per pin set) before either pass starts. */
let fuzzer: Promise<string>
const SCRATCH = process.env.RCP_TEST_DATA_DIR ?? tmpdir()
const logFile = join(SCRATCH, 'logs', 'fuzz-api.log')

beforeAll(async () => {
  fuzzer = (async () => {
    const setup = Bun.spawn(['bash', 'scripts/setup-schemathesis.sh'], { cwd: REPO_ROOT, stdout: 'pipe', stderr: 'inherit' })
    const [out, code] = await Promise.all([new Response(setup.stdout).text(), setup.exited])
    if (code !== 0) throw new Error(`scripts/setup-schemathesis.sh exited ${code}`)
    return out.trim()
  })()
  fuzzer.catch(() => {}) // awaited (and its error reported) by each pass
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  // Its own process, as deployed; budgets off so the fuzzer meets the operations, not the rate limiter. An
  // oversized query gets the documented 431 problem (the app raises Bun's header limit above its own).
  api = spawnChild('fuzz-api', {
    cmd: [process.execPath, 'api/main.ts'],
    cwd: REPO_ROOT,
    logFile,
    env: {
      ...process.env,
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PRINCIPAL_PER_MINUTE: '0',
      RATE_LIMIT_TENANT_PER_MINUTE: '0',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
      SIGNIN_ACCOUNT_LOCK_FAILURES: '0',
      SIGNIN_IP_LOCK_FAILURES: '0',
      RATE_LIMIT_DEVICE_AUTHORIZATIONS_PER_MINUTE: '0',
      RATE_LIMIT_DEVICE_CODE_ENTRIES_PER_MINUTE: '0',
    },
  })
  await waitUntil(api, 'the fuzz API', async () => (await fetch(`${base}/healthz`)).ok)
})

afterAll(async () => {
  await api?.stop()
})

/** An owner of a fresh tenant seeded with one resource of each kind: a cookie session with its CSRF token, a PAT
 *  holding every permission point, and the seeded ids. */
async function principals() {
  const client = new Client(base)
  const email = uniqueEmail('fuzz')
  const reg = await client.post('/users', { email, password: PASSWORD })
  expect(reg.status).toBe(201)
  expect((await client.post('/tenants', { name: 'Fuzz', slug: uniqueSlug('fuzz') })).status).toBe(201)
  const pat = await client.post('/api-keys', { name: 'fuzzer', scopes: [...PERMISSIONS] })
  expect(pat.status).toBe(201)
  const me = await client.get('/users/me')
  expect(me.status).toBe(200)
  const { ids, hooks } = await seedTenant(client)
  const resetGrants = await seedResetGrants(client)
  // The fuzzer's own membership: the one a membership switch may name.
  const ownMembershipId = me.json.data.currentMembership.id as string
  return { email, cookie: client.cookie!, csrf: client.csrf!, token: pat.json.data.token as string, ids, hooks: { ...hooks, ownMembershipId }, resetGrants }
}

// --max-time bounds the generation, not the requests in flight when it ends, nor the stateful phase's last links; on
// a loaded machine (two cores shared with the servers) a pass has overrun it by a minute. Generous, so only a hang fails.
// Twice over, as the interpreter-bug retry below may run a pass a second time.
const PASS_TIMEOUT_MS = 2 * (SECONDS * 2 + 120) * 1000

async function runOnce(exe: string, cwd: string, args: string[], hookSeed: Record<string, unknown>, hookLog = '') {
  // Its working directory takes schemathesis's own cache (.schemathesis/): the run's scratch space, not the repository.
  // Its hooks (schemathesis_hooks.py) and none from the environment: valid cases get what a valid request needs but the
  // document cannot state (a fresh Idempotency-Key, a webhook host that resolves, a time window whose end follows its start).
  const proc = Bun.spawn([exe, ...args], {
    cwd,
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, SCHEMATHESIS_HOOKS: HOOKS, RCP_FUZZ_HOOK_SEED: JSON.stringify(hookSeed), RCP_FUZZ_HOOK_LOG: hookLog },
  })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { out, err, code }
}

/** The run's schemathesis.toml. Its stateful phase follows the document's own links only: schemathesis also infers
 *  links between operations by name (some 800 here), and with them its time went to guesses before it reached the
 *  links the document states. Seeded ids fix the path parameters of the operations they fit (see fuzz-seed.ts). */
function fuzzConfig(doc: Parameters<typeof seededOperations>[0], ids: Record<string, string>, exclude: string[]) {
  return [
    // Each pass brings its own credential (--header). Credentials the fuzzer makes up from the document's security
    // schemes can only be refused, and in the cookie pass a made-up bearer token outranks the cookie: most of its valid
    // cases met 401 (3,982 of 4,471 in a quiet run).
    `[generation]\nmax-examples = ${EXAMPLES}\nwith-security-parameters = false\n`,
    `[checks.negative_data_rejection]\nexpected-statuses = ${JSON.stringify([...REJECTIONS])}\n`,
    // Scenarios, not single requests: at the run's own count the phase ended after a few seconds of its share and
    // handed the rest back to fuzzing, so most links were never followed. Set here, not on the command line, which
    // would override it.
    `[phases.stateful]\ngeneration = { max-examples = ${STATEFUL_SCENARIOS} }\n`,
    '[phases.stateful.inference]\nalgorithms = []\n',
    seededOperations(doc, ids, exclude),
  ].join('\n')
}

async function fuzz(label: string, headers: string[], exclude: string[], seeded: Awaited<ReturnType<typeof principals>>) {
  const { ids, hooks, resetGrants, email } = seeded
  const exe = await fuzzer
  // Each pass in a directory of its own: the two run at once and schemathesis keeps a cache in its working directory.
  const cwd = mkdtempSync(join(SCRATCH, `fuzz-${label}-`))
  // A request refused as too long (431, documented on every operation) is a rejection too: the fuzzer's invalid page
  // tokens and queries run past the 16 KiB target limit. Its default list, plus 431.
  const config = join(cwd, 'schemathesis.toml')
  const doc = await (await fetch(`${base}/v1/openapi.json`)).json()
  await Bun.write(config, fuzzConfig(doc, ids, exclude))
  const args = [
    '--config-file',
    config,
    'run',
    `${base}/v1/openapi.json`,
    '--url',
    base,
    '--checks',
    CHECKS.join(','),
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-time',
    String(SECONDS),
    '--workers',
    '1',
    '--request-timeout',
    '15',
    '--generation-deterministic',
    '--no-color',
    '--suppress-health-check',
    'all',
    // RCP_FUZZ_REPORT=har (or any of schemathesis's formats) keeps every request and answer beside the report, to read
    // why an operation's valid cases were refused.
    ...(process.env.RCP_FUZZ_REPORT ? ['--report', process.env.RCP_FUZZ_REPORT, '--report-dir', join(SCRATCH, 'logs', `fuzz-${label}-report`)] : []),
    ...headers.flatMap((h) => ['--header', h]),
    ...exclude.flatMap((op) => ['--exclude-name', op]),
  ]
  // What the hooks may use of the seeded tenant: the owner's password (the fuzzer's own account) and a non-member.
  const hookSeed = {
    email,
    password: PASSWORD,
    ...hooks,
    projectId: ids.projectId!,
    resetGrants,
    modelObjectKey: FUZZ_MODEL_KEY,
    base,
    headers,
  }
  // RCP_FUZZ_HOOK_LOG=1: the hooks write each valid case's answer to logs/fuzz-<label>-valid.log.
  const hookLog = process.env.RCP_FUZZ_HOOK_LOG === '1' ? join(SCRATCH, 'logs', `fuzz-${label}-valid.log`) : ''
  let { out, err, code } = await runOnce(exe, cwd, args, hookSeed, hookLog)
  // CPython 3.11.7 (this machine's python3) can raise "SystemError: AST constructor recursion depth mismatch" inside
  // the fuzzer's own code generation (gh-106905, fixed in 3.11.8): an interpreter bug, not a finding about our API. Its
  // recursion counter is shared between threads, so each pass runs one worker thread (the two passes run at once, as
  // processes, instead); should it still strike, that one signature gets one more run; any other failure stands.
  if (code !== 0 && /AST constructor recursion depth mismatch/.test(out + err)) {
    console.error(`schemathesis (${label}) hit CPython gh-106905; running it once more`)
    ;({ out, err, code } = await runOnce(exe, cwd, args, hookSeed, hookLog))
  }
  // The whole report beside the servers' logs (kept with RCP_KEEP_TEST_DATA=1): its warnings and its links' coverage.
  await Bun.write(join(SCRATCH, 'logs', `fuzz-${label}.out`), out + err)
  if (code !== 0) console.error(`schemathesis (${label}) exited ${code}:\n${out.slice(-12_000)}\n${err.slice(-2000)}\nAPI log:\n${tail(logFile, 20)}`)
  expect({ label, code }).toEqual({ label, code: 0 })
  expect(out).toContain('Tested')
}

// The two passes run at once, each as its own tenant's owner: the fuzzer mostly waits on the API, and either pass alone
// is the slowest thing in the suite.
describe('schemathesis over the whole OpenAPI document', () => {
  test.concurrent(
    'as a personal access token with every permission point',
    async () => {
      const p = await principals()
      await fuzz('PAT', [`Authorization: Bearer ${p.token}`], ENDS_OWN_CREDENTIAL, p)
    },
    PASS_TIMEOUT_MS,
  )

  test.concurrent(
    'as a cookie session with its CSRF header',
    async () => {
      const p = await principals()
      await fuzz('cookie', [`Cookie: ${p.cookie}`, `x-csrf-token: ${p.csrf}`], [...ENDS_OWN_CREDENTIAL, ...GATES_OWN_SESSION], p)
    },
    PASS_TIMEOUT_MS,
  )
})
