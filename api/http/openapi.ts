import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { z } from 'zod'
import { ErrorSets, STATUS_OF, type ErrorSetName } from '../platform/errors'
import { permissionCatalogueMarkdown, permissionTableMarkdown } from '../identity/permissions'
import { CSRF_HEADER, SESSION_COOKIE } from './auth'
import { resolveLinks } from './links'
import { GATE_SETS, NEW_WORK, NEW_WORK_EXEMPT, gateDescription } from './new-work'

const RAW_SPEC_PATH = '/v1/openapi-raw.json'

const ProblemJson = {
  type: 'object',
  required: ['type', 'title', 'status', 'code', 'message', 'requestId'],
  properties: {
    type: { type: 'string', format: 'uri' },
    title: { type: 'string' },
    status: { type: 'integer', description: 'Equals the HTTP status' },
    code: { type: 'string', description: 'One of the codes listed for the operation and status' },
    message: { type: 'string' },
    requestId: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } } },
    error: {
      type: 'string',
      enum: ['authorization_pending', 'slow_down', 'expired_token', 'access_denied'],
      description: "The device token endpoint only: the RFC 8628 name of the answer's code",
    },
  },
}

// The interface's name for the problem of 401, 403 and 429: a ProblemJson, whose code says which credential,
// permission or budget failed.
const PublishedAuthProblem = {
  allOf: [{ $ref: '#/components/schemas/ProblemJson' }],
  description: 'The problem answered with 401, 403 and 429 (a 429 also carries Retry-After and the RateLimit headers)',
}
const AUTH_STATUSES = new Set([401, 403, 429])

const DESCRIPTION = `Control plane for robot-model teams.

Conventions: success bodies carry \`data\` and \`meta.requestId\`; lists add \`meta.pageSize\` and \`nextPageToken\`.
Errors are \`application/problem+json\`. Authenticate with \`Authorization: Bearer rcp_pat_…\` (a personal access
token) or the \`${SESSION_COOKIE}\` cookie; cookie-authenticated unsafe requests need the \`${CSRF_HEADER}\` header.

Roles and permission points:

${permissionTableMarkdown()}

Permission points: a \`tenant\` point acts on the tenant as a whole; a \`project\` point may also be granted or denied
inside one project by a project membership. A point is held only with the points it requires.

${permissionCatalogueMarkdown()}
`

type Json = Record<string, unknown>

const problemContent = (schema: string) => ({ 'application/problem+json': { schema: { $ref: `#/components/schemas/${schema}` } } })
const PROBLEM_CONTENT = problemContent('ProblemJson')
const AUTH_PROBLEM_CONTENT = problemContent('PublishedAuthProblem')

// Every operation reads or writes Postgres (authentication does, for a start), so any may find it away.
const UNAVAILABLE_RESPONSE = {
  description:
    'code is SERVICE_UNAVAILABLE: the database or the workflow service cannot be reached now (down, restarting or overloaded); the same request may be retried after Retry-After seconds',
  headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 }, description: 'Seconds to wait before retrying' } },
  content: PROBLEM_CONTENT,
}

/** Problem responses by status, from the route's declared sets (plus 401/403 when it needs a credential). */
function problemResponses(sets: readonly ErrorSetName[], secured: boolean) {
  const all: ErrorSetName[] = [...sets, 'R429', 'X431', ...(secured ? (['U401', 'F403'] as const) : [])]
  const byStatus = new Map<number, Set<string>>()
  for (const s of all)
    for (const c of ErrorSets[s]) {
      const status = STATUS_OF[c as keyof typeof STATUS_OF]
      byStatus.set(status, (byStatus.get(status) ?? new Set()).add(c))
    }
  return {
    ...Object.fromEntries(
      [...byStatus].map(([status, codes]) => [
        status,
        {
          description: `code is one of: ${[...codes].join(', ')}`,
          content: AUTH_STATUSES.has(status) ? AUTH_PROBLEM_CONTENT : PROBLEM_CONTENT,
        },
      ]),
    ),
    503: UNAVAILABLE_RESPONSE,
  }
}

/** The new-work gate's list (api/http/new-work.ts), printed into each operation it names: the extra error sets, the
 *  sentence in its description, and `x-new-work` (what it starts) or `x-new-work-exempt` (why it is not new work). */
function markNewWork(key: string, op: Json): void {
  const what = NEW_WORK[key]
  const exempt = NEW_WORK_EXEMPT[key]
  if (what !== undefined) {
    op['x-new-work'] = what
    op['x-error-sets'] = [...((op['x-error-sets'] as ErrorSetName[] | undefined) ?? []), ...GATE_SETS]
    op.description = [op.description, gateDescription(what)].filter(Boolean).join('\n\n')
  } else if (exempt !== undefined) op['x-new-work-exempt'] = exempt
}

function addProblemResponses(paths: Json): void {
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops as Json) as [string, Json][]) {
      markNewWork(`${method.toUpperCase()} ${path}`, op)
      optionalNullishBody(op)
      const sets = op['x-error-sets'] as ErrorSetName[] | undefined
      if (!sets) continue
      const secured = Array.isArray(op.security) && op.security.length > 0
      op.responses = { ...(op.responses as Json), ...problemResponses(sets, secured) }
    }
  }
}

/** A route whose body model is `.nullish()` takes a request without one (DELETE /users/me/mfa/totp), and a JSON null:
 *  zod writes "the model or null", but the plugin marks the body required. Stated as an optional body. */
function optionalNullishBody(op: Json): void {
  const content = (op.requestBody as Json | undefined)?.content as Json | undefined
  const json = content?.['application/json'] as Json | undefined
  const variants = (json?.schema as Json | undefined)?.anyOf as Json[] | undefined
  if (!json || !variants || variants.length !== 2 || !variants.some((v) => v.type === 'null')) return
  ;(op.requestBody as Json).required = false
}

const hasDefault = (schema: unknown) => !!schema && typeof schema === 'object' && 'default' in (schema as Json)

/** zod writes its output type, where a field with a default is always present, so "required"; a client may leave
 *  it out (the server fills it in), so in a request it is optional: as a property and as a query parameter. */
function optionalDefaults(node: Json): Json {
  if (Array.isArray(node.required) && node.properties && typeof node.properties === 'object') {
    const props = node.properties as Json
    node.required = (node.required as string[]).filter((name) => !hasDefault(props[name]))
  }
  if (node.in === 'query' && node.required === true && hasDefault(node.schema)) node.required = false
  return node
}

/** Elysia inlines every named zod model as a local $defs block; clients want them once, by name, under
 *  components.schemas. This lifts them and rewrites the references. */
export function hoistSchemas(doc: Json): Json {
  const schemas: Record<string, unknown> = {}
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk)
    if (!node || typeof node !== 'object') return node
    const out: Json = {}
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === '$defs' && v && typeof v === 'object') {
        for (const [name, def] of Object.entries(v as Json)) schemas[name] = walk(def)
      } else if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
        out[k] = `#/components/schemas/${v.slice('#/$defs/'.length)}`
      } else if (k !== '$schema') {
        out[k] = walk(v)
      }
    }
    // A schema that is nothing but a reference after hoisting stays a plain $ref.
    return optionalDefaults(out)
  }
  const paths = walk(doc.paths) as Json
  addProblemResponses(paths)
  resolveLinks(paths)
  const components = (doc.components ?? {}) as Json
  return {
    ...doc,
    paths,
    components: {
      ...components,
      schemas: { ...((components.schemas as Json) ?? {}), ...schemas, ProblemJson, PublishedAuthProblem },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Personal access token (rcp_pat_…) or session token (rcp_ses_…)' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
      },
    },
  }
}

/** `handle` serves the raw document in-process (the root app's handle), so no request leaves the server. `extra`
 *  holds top-level sections the route plugin cannot describe (the OpenAPI 3.1 `webhooks` of the event catalogue). */
export function openapiRoutes(handle: (req: Request) => Promise<Response>, extra: { webhooks?: Json } = {}) {
  let cached: Json | undefined
  return new Elysia()
    .use(
      openapi({
        // The plugin's page loads its script from a CDN: off. api/docs serves the reference from our own origin.
        provider: null,
        specPath: RAW_SPEC_PATH,
        mapJsonSchema: { zod: z.toJSONSchema },
        documentation: {
          info: { title: 'Robot Control Plane API', version: '1.0.0', description: DESCRIPTION },
          servers: [{ url: '/' }],
        },
        exclude: { paths: [RAW_SPEC_PATH, '/v1/openapi.json', '/healthz', '/readyz'] },
      }),
    )
    .get(
      '/v1/openapi.json',
      async ({ request }) => {
        if (!cached) {
          const raw = await handle(new Request(new URL(RAW_SPEC_PATH, request.url))).then((r) => r.json() as Promise<Json>)
          cached = { ...hoistSchemas(raw), ...extra }
        }
        return new Response(JSON.stringify(cached), { headers: { 'content-type': 'application/json' } })
      },
      { detail: { hide: true } },
    )
}
