// Response links are what lets a generated client, and the fuzzer's stateful phase, follow a created resource's id
// into the operations on it. Read from the document the app serves, so a new create operation without its links, or a
// link whose id pointer leads nowhere in the response body, fails here.
import { expect, test } from 'bun:test'
import { links, resolveLinks } from '../../api/http/links'
import { openapiDocument } from '../../scripts/api-types'

type Json = Record<string, unknown>
type Op = { operationId: string; parameters?: { name: string; in: string }[]; responses: Record<string, Json> }
type Link = { operationId: string; parameters: Record<string, string> }

const doc = (await openapiDocument()) as unknown as { paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, Json> } }
const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete'])
const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([m]) => METHODS.has(m))
    .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, method, path, op })),
)
const byId = new Map(ops.map((o) => [o.op.operationId, o]))
const params = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string)
const successOf = (op: Op) =>
  Object.keys(op.responses)
    .filter((s) => /^2\d\d$/.test(s))
    .sort()[0] as string

const deref = (schema: Json): Json =>
  typeof schema.$ref === 'string' ? deref(doc.components.schemas[(schema.$ref as string).split('/').pop() as string] as Json) : schema

/** Whether a JSON pointer names a property in every variant the schema allows (anyOf/oneOf/allOf followed). */
function resolves(schema: Json, pointer: string[]): boolean {
  const s = deref(schema)
  const variants = (s.anyOf ?? s.oneOf) as Json[] | undefined
  if (variants) return variants.every((v) => resolves(v, pointer))
  if (Array.isArray(s.allOf)) return (s.allOf as Json[]).some((v) => resolves(v, pointer))
  if (pointer.length === 0) return true
  const next = (s.properties as Record<string, Json> | undefined)?.[pointer[0] as string]
  return next !== undefined && resolves(next, pointer.slice(1))
}

test('every operation that creates a resource links to each operation on it, by the path it creates under', () => {
  const creates = ops.filter((o) => o.method === 'post' && '201' in o.op.responses)
  const missing: string[] = []
  let linked = 0
  for (const c of creates) {
    const have = (c.op.responses['201']?.links ?? {}) as Record<string, Link>
    // Operations under the created path with exactly one path parameter more: the new resource's id.
    const on = ops.filter((o) => o.path.startsWith(`${c.path}/{`) && params(o.path).length === params(c.path).length + 1)
    for (const target of on) {
      const link = Object.values(have).find((l) => l.operationId === target.op.operationId)
      if (link) linked++
      else missing.push(`${c.key} -> ${target.key}`)
    }
  }
  expect(missing).toEqual([])
  // The rule is not vacuous: projects, model versions, webhook endpoints, exports, domains and more have such operations.
  expect(linked).toBeGreaterThan(30)
})

test('every link names an operation of the document, supplies its path parameters and points into the response body', () => {
  const broken: string[] = []
  let count = 0
  for (const o of ops)
    for (const [status, response] of Object.entries(o.op.responses)) {
      for (const [name, link] of Object.entries((response.links ?? {}) as Record<string, Link>)) {
        count++
        const target = byId.get(link.operationId)
        if (!target) {
          broken.push(`${o.key} ${name}: no operation ${link.operationId}`)
          continue
        }
        if (status !== successOf(o.op)) broken.push(`${o.key} ${name}: on ${status}, not the success response`)
        for (const p of params(target.path)) if (!(p in link.parameters)) broken.push(`${o.key} ${name}: ${p} not supplied`)
        for (const [p, expr] of Object.entries(link.parameters)) {
          if (expr.startsWith('$request.path.')) {
            if (!params(o.path).includes(expr.slice('$request.path.'.length))) broken.push(`${o.key} ${name}: ${expr} is not a path parameter`)
          } else if (expr.startsWith('$response.body#/')) {
            const schema = (response.content as Record<string, { schema: Json }>)['application/json']?.schema
            if (!schema || !resolves(schema, expr.slice('$response.body#/'.length).split('/'))) broken.push(`${o.key} ${name}: ${p}=${expr} is not in the body`)
          } else broken.push(`${o.key} ${name}: ${p}=${expr} is neither a path parameter nor a body pointer`)
        }
      }
    }
  expect(broken).toEqual([])
  expect(count).toBeGreaterThan(30)
})

test('a link to an operation the document lacks, or without a path parameter it needs, fails the document', () => {
  const paths = (spec: object) => ({
    '/v1/things': { post: { operationId: 'createThing', responses: { '201': {} }, ...spec } },
    '/v1/things/{thingId}/parts/{partId}': { get: { operationId: 'getPart', responses: { '200': {} } } },
  })
  expect(() => resolveLinks(paths(links({ thingId: '$response.body#/data/id' }, ['GET /v1/things/{thingId}'])))).toThrow(/does not have/)
  expect(() => resolveLinks(paths(links({ thingId: '$response.body#/data/id' }, ['GET /v1/things/{thingId}/parts/{partId}'])))).toThrow(/without partId/)
  const ok = paths(links({ thingId: '$response.body#/data/id', partId: '$response.body#/data/partId' }, ['GET /v1/things/{thingId}/parts/{partId}']))
  resolveLinks(ok)
  expect(ok['/v1/things'].post).toEqual({
    operationId: 'createThing',
    responses: {
      '201': { links: { getPart: { operationId: 'getPart', parameters: { thingId: '$response.body#/data/id', partId: '$response.body#/data/partId' } } } },
    },
  })
})
