/**
 * OpenAPI response links from an operation that creates a resource to the operations that read, change or act on it,
 * so a generated client (and a stateful fuzzer) can follow an id from one answer into the next request.
 *
 * A route states them in its `detail` as `links(parameters, targets)`; Elysia's generator rebuilds an operation's
 * `responses` from the route's response models, so the links ride in an extension key and api/http/openapi.ts moves
 * them into the success response, naming each link by its target's operationId.
 */
export const LINKS_KEY = 'x-links'

/** `$response.body#/data/id` and the like: where the created resource's id is in the answer. */
export type LinkParameters = Record<string, string>

export type LinkSpec = { parameters: LinkParameters; targets: readonly string[] }

/**
 * `parameters`: each path parameter a target takes, as a runtime expression (`$response.body#/data/id`,
 * `$request.path.projectId`); `targets`: the operations, as `METHOD /v1/path/{param}` the way the document spells them.
 * Spread into a route's `detail`.
 */
export function links(parameters: LinkParameters, targets: readonly string[]): Record<string, never> {
  // An extension key Elysia's detail type does not list (as the errors macro's x-error-sets).
  return { [LINKS_KEY]: { parameters, targets } satisfies LinkSpec } as never
}

type Json = Record<string, unknown>

const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string)

/** Moves every operation's `x-links` into its success response's `links`. A target the document lacks, or one whose
 *  path parameters the spec does not all supply, throws: a link that leads nowhere is a broken contract. */
export function resolveLinks(paths: Json): void {
  const operationIds = new Map<string, string>()
  for (const [path, ops] of Object.entries(paths))
    for (const [method, op] of Object.entries(ops as Json)) operationIds.set(`${method.toUpperCase()} ${path}`, (op as Json).operationId as string)
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops as Json) as [string, Json][]) {
      const spec = op[LINKS_KEY] as LinkSpec | undefined
      if (!spec) continue
      delete op[LINKS_KEY]
      const responses = op.responses as Record<string, Json>
      const success = Object.keys(responses)
        .filter((s) => /^2\d\d$/.test(s))
        .sort()[0]
      if (!success) throw new Error(`${method.toUpperCase()} ${path} has links but no success response`)
      const built: Record<string, Json> = {}
      for (const target of spec.targets) {
        const operationId = operationIds.get(target)
        if (!operationId) throw new Error(`${method.toUpperCase()} ${path} links to ${target}, which the document does not have`)
        const wanted = pathParams(target.slice(target.indexOf(' ') + 1))
        const missing = wanted.filter((p) => !(p in spec.parameters))
        if (missing.length > 0) throw new Error(`${method.toUpperCase()} ${path} links to ${target} without ${missing.join(', ')}`)
        built[operationId] = { operationId, parameters: Object.fromEntries(wanted.map((p) => [p, spec.parameters[p]])) }
      }
      responses[success] = { ...responses[success], links: built }
    }
  }
}
