import { codesOf, type ErrorSetName } from '../platform/errors'

/** Which methods the app serves on a path, for the 405 answer's Allow header (RFC 9110 §15.5.6). Built once from
 *  the app's route table after every domain has registered; a path parameter matches one segment. */
export interface MethodIndex {
  allowed(pathname: string): string[]
}

export function methodIndex(routes: readonly { method: string; path: string }[]): MethodIndex {
  const patterns = new Map<string, { re: RegExp; methods: Set<string> }>()
  for (const { method, path } of routes) {
    if (method === 'ALL' || path.includes('*')) continue
    let entry = patterns.get(path)
    if (!entry) {
      const source = path
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')
      patterns.set(path, (entry = { re: new RegExp(`^${source}/?$`), methods: new Set() }))
    }
    entry.methods.add(method.toUpperCase())
    // Bun answers HEAD for every GET route.
    if (method.toUpperCase() === 'GET') entry.methods.add('HEAD')
  }
  const list = [...patterns.entries()]
  return {
    allowed(pathname) {
      // A path that names a resource of its own (no parameter) is that resource, whatever a parameter route of
      // the same shape would also catch: /sessions/bulk-invalidation-requests is not a session id.
      const exact = patterns.get(pathname) ?? patterns.get(pathname.replace(/\/$/, ''))
      if (exact) return [...exact.methods].sort()
      const methods = new Set<string>()
      for (const [, { re, methods: m }] of list) if (re.test(pathname)) for (const x of m) methods.add(x)
      return [...methods].sort()
    },
  }
}

/** The app's route table for the 405 answers, handed to the conventions explicitly: the problem mapping asks it,
 *  and the app publishes its routes into it once every domain has registered (api/app.ts). Until then (and in an
 *  app that never publishes) no path has methods, so an unknown route is a 404. */
export class RouteTable {
  private index: MethodIndex | undefined
  /** `METHOD path` → the codes of the route's declared error sets (the errors macro's `x-error-sets`). */
  private declared = new Map<string, ReadonlySet<string>>()

  publish(routes: readonly { method: string; path: string; hooks?: unknown }[]): void {
    this.index = methodIndex(routes)
    for (const r of routes) {
      const sets = (r.hooks as { detail?: Record<string, unknown> } | undefined)?.detail?.['x-error-sets']
      if (Array.isArray(sets)) this.declared.set(`${r.method.toUpperCase()} ${r.path}`, codesOf(sets as ErrorSetName[]))
    }
  }

  /** Whether the route (its pattern, as Elysia names it) declares `code`: for a refusal decided before the route's own
   *  errors macro has run (the auth macro's transform comes first). False until the app publishes its routes. */
  declares(method: string, route: string, code: string): boolean {
    return this.declared.get(`${method.toUpperCase()} ${route}`)?.has(code) ?? false
  }

  allowed(pathname: string): string[] {
    return this.index?.allowed(pathname) ?? []
  }
}
