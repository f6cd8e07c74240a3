import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

// This file reads the tree as text and imports nothing of it, so it needs no server (and no build) to run.
const ROOT = join(import.meta.dir, '..', '..')

/** Every module a file names: an import or re-export (`import type` included: a type edge is still a dependency),
 *  an import for its effect, and a dynamic `import('…')` (a type written as `typeof import('…')` too). */
const specsIn = (src: string): string[] => {
  const specs = src.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  )
  return [...specs].map((m) => (m[1] ?? m[2] ?? m[3])!)
}

const importsOf = async (file: string) => specsIn(await Bun.file(join(ROOT, file)).text())

/** A local specifier as a repository path without extension ('api/users/service'); a package stays as it is. */
const resolveLocal = (file: string, spec: string) => (spec.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.tsx?$/, '') : spec)

const files = (pattern: string) => Array.fromAsync(new Glob(pattern).scan({ cwd: ROOT }))

type Source = { file: string; targets: { spec: string; target: string }[] }

const withImports = (list: string[]): Promise<Source[]> =>
  Promise.all(list.sort().map(async (file) => ({ file, targets: (await importsOf(file)).map((spec) => ({ spec, target: resolveLocal(file, spec) })) })))

// The console's browser program: bundled for the browser by scripts/build-console.ts, never run by the server.
const CONSOLE_UI = 'api/console/ui/'

// Every folder of code: the two processes, the console's browser program, the client SDKs, the scripts, the benchmarks
// and the tests (with their support). The cycle check reads all of it; the rules on the server's layers read the
// server's part.
const TREE = ['api', 'activities', 'workflows', 'worker', 'clients', 'scripts', 'bench', 'test']
const everything = await withImports(await files(`{${TREE.join(',')}}/**/*.{ts,tsx}`))

/** Files of the server, with what each imports, read once. */
const sources = everything.filter((s) => /^(api|activities|workflows|worker)\//.test(s.file) && !s.file.startsWith(CONSOLE_UI))

/** The file a local target names ('x' is x.ts, x.tsx, x/index.ts or x itself), or undefined (a package, an asset,
 *  code in a string that a test runs elsewhere). */
function fileResolver(list: Source[]) {
  const known = new Set(list.map((s) => s.file))
  return (target: string) => [`${target}.ts`, `${target}.tsx`, `${target}/index.ts`, `${target}/index.tsx`, target].find((f) => known.has(f))
}

/** The graph of files: file → the files it imports, type-only imports included. */
function fileGraph(list: Source[]): Map<string, Set<string>> {
  const fileOf = fileResolver(list)
  return new Map(list.map(({ file, targets }) => [file, new Set(targets.map((t) => fileOf(t.target)).filter((f) => f !== undefined))]))
}

// Layers below or beside the domains: `platform` imports nothing of ours; `http` is the Elysia conventions plugin.
const LAYERS = new Set(['platform', 'http'])
// Folders of pages: a routes.ts serving static files (and the console's browser program), no domain of their own.
const PAGES = new Set(['docs', 'console'])
// The composition roots: they wire everything. api/compose.ts builds every process's dependencies, so the worker,
// and the routes for the AppDeps type, import it; nothing imports the other two.
const ROOTS = new Set(['api/app.ts', 'api/main.ts', 'api/compose.ts'])

// Entry points of the child processes the API starts: named by path, so no import reaches them.
const API_CHILDREN = new Set(['api/identity/password-hasher-process.ts'])

// Run by scripts/up.ts before either process starts, so neither process's graph reaches it.
const RUN_BY_SCRIPTS = new Set(['api/platform/migrate.ts'])

// A domain's own work that a loop of the worker runs (worker/webhook-dispatcher.ts): the loop, its timer and its
// LISTEN are the worker's; what one pass writes is the domain's, beside the rest of its rules.
const RUN_BY_WORKER_LOOPS = new Set(['api/webhook-deliveries/fan-out.ts'])

/** Every file reached from `starts` by following local imports ('./x' resolves to x.ts or x/index.ts). */
function reachable(list: Source[], starts: string[]): Set<string> {
  const byPath = new Map(list.map((s) => [s.file, s]))
  const fileOf = fileResolver(list)
  const seen = new Set<string>()
  const stack = [...starts]
  while (stack.length > 0) {
    const file = stack.pop()!
    if (seen.has(file) || !byPath.has(file)) continue
    seen.add(file)
    for (const { target } of byPath.get(file)!.targets) {
      const next = fileOf(target)
      if (next) stack.push(next)
    }
  }
  return seen
}

/** The part of the tree a path belongs to: its top folder, with the workflows' contract modules (what the API and
 *  the activities share with the workflows) and the console's browser program apart. */
const partOf = (path: string) =>
  path.startsWith(CONSOLE_UI) ? 'console-ui' : /^workflows\/contract[^/]*$/.test(path) ? 'workflows-contract' : path.split('/')[0]!

/** What each part of the server (and the scripts) may import besides itself and packages: the worker runs the
 *  activities, the activities call the domains, never the reverse; none of them imports the scripts, the benchmarks
 *  or the tests. The benchmarks and tests may import anything: they exercise it. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  api: ['workflows-contract'], // a service starts a workflow by its contract
  'console-ui': ['api'], // the permission table (the console test below names exactly what)
  'workflows-contract': ['api'], // types: the config a task queue's name reads, the package manifest
  activities: ['api', 'workflows-contract'],
  workflows: ['activities', 'workflows-contract'], // the activities as a type only (checked below)
  worker: ['api', 'activities', 'workflows', 'workflows-contract'],
  scripts: ['api', 'workflows-contract'],
  clients: [], // a client of the API: what it knows of the server is the generated document, never its code
}

/** Imports against MAY_IMPORT, as 'file → target'. */
function layerViolations(list: Source[]): string[] {
  const out: string[] = []
  for (const { file, targets } of list) {
    const allowed = MAY_IMPORT[partOf(file)]
    if (!allowed) continue
    for (const { spec, target } of targets) {
      const to = partOf(target)
      if (spec.startsWith('.') && TREE.includes(target.split('/')[0]!) && to !== partOf(file) && !allowed.includes(to)) out.push(`${file} → ${target}`)
    }
  }
  return out
}

/** The folder under api/ a file belongs to ('users'), or undefined outside api/<folder>/. */
const folderOf = (path: string) => /^api\/([^/]+)\//.exec(path)?.[1]
const isRoutes = (path: string) => /^api\/[^/]+\/routes(\.ts)?$/.test(path)

/** The domain graph: folder → folders its non-route files import. Routes are the delivery edge: they may import
 *  any domain (and http), so they are left out; a domain's own core must not depend on anything that depends on it. */
function domainGraph(list: Source[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>()
  for (const { file, targets } of list) {
    const from = folderOf(file)
    if (!from || from === 'platform' || isRoutes(file)) continue
    const edges = graph.get(from) ?? graph.set(from, new Set()).get(from)!
    for (const { target } of targets) {
      const to = folderOf(`${target}/`) ?? folderOf(target)
      if (to && to !== from && to !== 'platform') edges.add(to)
    }
  }
  return graph
}

/** One cycle of the graph as a path (a → b → a), or null when it has none. */
function findCycle(graph: Map<string, Set<string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (node: string): string[] | null => {
    if (state.get(node) === 'done') return null
    if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node]
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next)
      if (cycle) return cycle
    }
    stack.pop()
    state.set(node, 'done')
    return null
  }
  for (const node of graph.keys()) {
    const cycle = visit(node)
    if (cycle) return cycle
  }
  return null
}

describe('import direction', () => {
  test('every server file is covered: api/ holds only the roots beside its folders, and every folder is a domain or a layer', () => {
    const apiFiles = sources.filter((s) => s.file.startsWith('api/'))
    expect(apiFiles.length).toBeGreaterThan(80)
    for (const { file } of apiFiles) expect({ file, placed: ROOTS.has(file) || folderOf(file) !== undefined }).toEqual({ file, placed: true })
    const folders = readdirSync(join(ROOT, 'api'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
    const graph = domainGraph(sources)
    for (const folder of folders) expect({ folder, inGraph: LAYERS.has(folder) || graph.has(folder) || PAGES.has(folder) }).toEqual({ folder, inGraph: true })
  })

  test('the console UI imports only itself, the permission table and its browser packages; the server never imports it', () => {
    const ui = everything.filter((s) => s.file.startsWith(CONSOLE_UI))
    expect(ui.length).toBeGreaterThan(5)
    const allowed = (t: string) =>
      t.startsWith(CONSOLE_UI) || t === 'api/identity/permissions' || ['preact', 'preact/hooks', 'openapi-fetch', '@simplewebauthn/browser'].includes(t)
    for (const { file, targets } of ui) for (const { target } of targets) expect({ file, target, ok: allowed(target) }).toMatchObject({ ok: true })
    for (const { file, targets } of sources)
      for (const { target } of targets) expect({ file, target, ok: !`${target}/`.startsWith(CONSOLE_UI) }).toMatchObject({ ok: true })
  })

  test('the SDK is a client: clients/ imports only itself and its HTTP packages, and nothing of the server imports it', () => {
    const sdk = everything.filter((s) => s.file.startsWith('clients/'))
    expect(sdk.length).toBeGreaterThan(5)
    // The command line (clients/cli) is a program on the SDK: it also reads files, serves a receiver and hashes, with
    // the runtime's own modules only, so its binary carries no package of the server.
    const allowed = (file: string, spec: string, target: string) =>
      spec.startsWith('.')
        ? target.startsWith('clients/')
        : ['openapi-fetch', 'openapi-typescript-helpers'].includes(spec) || (file.startsWith('clients/cli/') && /^node:[a-z_/]+$/.test(spec))
    for (const { file, targets } of sdk)
      for (const { spec, target } of targets) expect({ file, target, ok: allowed(file, spec, target) }).toMatchObject({ ok: true })
    expect(allowed('clients/ts/client.ts', 'node:fs', 'node:fs')).toBe(false)
    for (const { file, targets } of sources)
      for (const { target } of targets) expect({ file, target, ok: !target.startsWith('clients/') }).toMatchObject({ ok: true })
    expect(layerViolations([{ file: 'clients/ts/x.ts', targets: [{ spec: '../../api/platform/errors', target: 'api/platform/errors' }] }])).toEqual([
      'clients/ts/x.ts → api/platform/errors',
    ])
  })

  test('the layers point one way: worker → activities → api, never back; nothing of the server imports the scripts, benchmarks or tests', () => {
    expect(sources.length).toBeGreaterThan(150)
    expect(layerViolations(everything)).toEqual([])
  })

  test('the layer check flags an import against the direction (so a green result means something)', () => {
    const sample: Source[] = [
      {
        file: 'api/a/service.ts',
        targets: [
          { spec: '../../activities/x', target: 'activities/x' },
          { spec: '../../workflows/contract-a', target: 'workflows/contract-a' },
        ],
      },
      {
        file: 'activities/x.ts',
        targets: [
          { spec: '../worker/deps', target: 'worker/deps' },
          { spec: '../api/a/service', target: 'api/a/service' },
        ],
      },
      {
        file: 'worker/run.ts',
        targets: [
          { spec: '../bench/harness', target: 'bench/harness' },
          { spec: '../activities', target: 'activities' },
        ],
      },
      { file: 'bench/harness.ts', targets: [{ spec: '../worker/run', target: 'worker/run' }] },
    ]
    expect(layerViolations(sample)).toEqual(['api/a/service.ts → activities/x', 'activities/x.ts → worker/deps', 'worker/run.ts → bench/harness'])
  })

  test("api/ holds only what the API process runs (and a domain's pass a worker loop runs): code only the activities use lives beside them", () => {
    const workerReach = reachable(
      sources,
      sources.map((s) => s.file).filter((f) => f.startsWith('worker/')),
    )
    for (const file of RUN_BY_WORKER_LOOPS) expect({ file, reachedByWorker: workerReach.has(file) }).toEqual({ file, reachedByWorker: true })
    const apiReach = reachable(sources, [...ROOTS, ...API_CHILDREN])
    const activityReach = reachable(
      sources,
      sources.map((s) => s.file).filter((f) => f.startsWith('activities/')),
    )
    for (const { file } of sources.filter((s) => s.file.startsWith('api/') && !RUN_BY_SCRIPTS.has(s.file) && !RUN_BY_WORKER_LOOPS.has(s.file))) {
      expect({ file, reachedBy: apiReach.has(file) ? 'api' : activityReach.has(file) ? 'activities only' : 'worker only' }).toEqual({ file, reachedBy: 'api' })
    }
  })

  test('the reach check flags a module only the worker or the activities import (so a green result means something)', () => {
    const sample = [
      { file: 'api/app.ts', targets: [{ spec: './a/routes', target: 'api/a/routes' }] },
      { file: 'api/a/routes.ts', targets: [{ spec: './service', target: 'api/a/service' }] },
      { file: 'api/a/service.ts', targets: [] },
      { file: 'api/a/loop.ts', targets: [{ spec: './service', target: 'api/a/service' }] },
      { file: 'api/a/batch.ts', targets: [{ spec: './service', target: 'api/a/service' }] },
      { file: 'worker/run.ts', targets: [{ spec: '../api/a/loop', target: 'api/a/loop' }] },
      { file: 'activities/a.ts', targets: [{ spec: '../api/a/batch', target: 'api/a/batch' }] },
    ]
    expect([...reachable(sample, ['api/app.ts'])].sort()).toEqual(['api/a/routes.ts', 'api/a/service.ts', 'api/app.ts'])
  })

  test('activities and workflows never see an HTTP error: they import neither ApiError nor the error catalogue', () => {
    for (const { file, targets } of sources.filter((s) => /^(activities|workflows)\//.test(s.file))) {
      for (const { target } of targets) expect({ file, target, ok: target !== 'api/platform/errors' }).toMatchObject({ ok: true })
    }
  })

  test('one dependency container: AppDeps and ActivityDeps extend ServiceDeps, and no worker-side code fakes one with a cast', async () => {
    expect(await Bun.file(join(ROOT, 'api/compose.ts')).text()).toMatch(/interface AppDeps extends ServiceDeps\b/)
    expect(await Bun.file(join(ROOT, 'activities/deps.ts')).text()).toMatch(/interface ActivityDeps extends ServiceDeps\b/)
    for (const { file } of sources.filter((s) => /^(activities|workflows|worker)\//.test(s.file))) {
      const casts = (await Bun.file(join(ROOT, file)).text()).match(/\bas\s+(unknown\s+as\s+)?(ServiceDeps|ActivityDeps|AppDeps)\b/g)
      expect({ file, casts }).toEqual({ file, casts: null })
    }
  })

  test('workflows/ import activities by type only', async () => {
    for (const file of await files('workflows/**/*.ts')) {
      const src = await Bun.file(join(ROOT, file)).text()
      for (const m of src.matchAll(/(?:^|\n)\s*import\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
        if (/activities/.test(m[2]!)) expect({ file, spec: m[2], typeOnly: Boolean(m[1]) }).toMatchObject({ typeOnly: true })
      }
    }
  })

  test('workflows/ proxy the one Activities type activities/index.ts exports, and declare none of their own', async () => {
    const proxying = (await files('workflows/**/*.ts')).filter((f) => !partOf(f).endsWith('contract'))
    expect(proxying.length).toBeGreaterThan(5)
    for (const file of proxying) {
      const src = await Bun.file(join(ROOT, file)).text()
      if (!/proxy(Local)?Activities</.test(src)) continue
      expect({
        file,
        imports: /import type \{ Activities \} from '\.\.\/activities'/.test(src),
        declares: /createActivities|type \w+ = ReturnType/.test(src),
      }).toEqual({ file, imports: true, declares: false })
    }
  })

  test('workflows/ import values only from their own folder and @temporalio (worker/bundle-cache.ts hashes just those)', async () => {
    const found: { file: string; spec: string }[] = []
    for (const file of await files('workflows/**/*.ts')) {
      const src = await Bun.file(join(ROOT, file)).text()
      for (const m of src.matchAll(/(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
        if (!m[1] && !/^\.\/[^/]+$|^@temporalio\//.test(m[2]!)) found.push({ file, spec: m[2]! })
      }
    }
    expect(found).toEqual([])
  })

  test("only a domain's routes.ts touches Elysia or api/http; platform imports nothing of ours; nothing imports a routes file but app.ts", () => {
    for (const { file, targets } of sources) {
      const folder = folderOf(file)
      for (const { spec, target } of targets) {
        const framework = spec === 'elysia' || spec.startsWith('@elysiajs/') || /^api\/http\//.test(target)
        const mayUseFramework = ROOTS.has(file) || folder === 'http' || (isRoutes(file) && !/^(activities|workflows|worker)\//.test(file))
        expect({ file, spec, framework, ok: !framework || mayUseFramework }).toMatchObject({ ok: true })
        if (folder === 'platform') expect({ file, target, ok: !target.startsWith('api/') || target.startsWith('api/platform/') }).toMatchObject({ ok: true })
        if (isRoutes(target)) expect({ file, target, ok: file === 'api/app.ts' }).toMatchObject({ ok: true })
      }
    }
  })

  test('the domain graph has one direction: no two domains depend on each other, however indirectly', () => {
    const graph = domainGraph(sources)
    expect(graph.size).toBeGreaterThan(10)
    expect(findCycle(graph)).toBeNull()
  })

  test('the cycle check finds a cycle when there is one (so a green result means something)', () => {
    const sample = domainGraph([
      { file: 'api/a/service.ts', targets: [{ spec: '../b/queries', target: 'api/b/queries' }] },
      { file: 'api/b/queries.ts', targets: [{ spec: '../c/service', target: 'api/c/service' }] },
      { file: 'api/c/service.ts', targets: [{ spec: '../a/model', target: 'api/a/model' }] },
      { file: 'api/d/routes.ts', targets: [{ spec: '../a/service', target: 'api/a/service' }] },
    ])
    expect(findCycle(sample)).toEqual(['a', 'b', 'c', 'a'])
    sample.get('c')!.clear()
    expect(findCycle(sample)).toBeNull()
  })
})

describe('import circles', () => {
  test('no file of the tree imports itself through others, type-only imports included', () => {
    const graph = fileGraph(everything)
    expect(graph.size).toBeGreaterThan(400)
    expect([...graph.values()].reduce((n, edges) => n + edges.size, 0)).toBeGreaterThan(1500)
    expect(findCycle(graph)).toBeNull()
  })

  test('every local import outside the test files resolves to a file the check reads (an unread edge could hide a circle)', () => {
    const fileOf = fileResolver(everything)
    const unresolved = everything
      .filter((s) => !s.file.endsWith('.test.ts'))
      .flatMap(({ file, targets }) =>
        targets
          // Assets the console's bundler takes, and the console's API types, generated by the build (not committed).
          .filter(({ spec, target }) => spec.startsWith('.') && !fileOf(target) && !/\.(css|json)$/.test(spec) && !target.endsWith('.gen'))
          .map(({ spec }) => `${file}: ${spec}`),
      )
    expect(unresolved).toEqual([])
  })

  test('the file check finds a circle made of type-only imports (so a green result means something)', async () => {
    const sample = (file: string, src: string): Source => ({ file, targets: specsIn(src).map((spec) => ({ spec, target: resolveLocal(file, spec) })) })
    const list = [
      sample('activities/index.ts', "import { mailActivities } from './mail'\nexport type { ActivityDeps } from './deps'"),
      sample('activities/deps.ts', "import type { ServiceDeps } from '../api/platform/deps'"),
      sample('activities/mail.ts', "import {\n  renderMail,\n} from '../api/mail/templates'\nimport type { ActivityDeps } from './index'"),
      sample('api/mail/templates.ts', "import './register'\ntype Page = typeof import('../console/ui/page')"),
      sample('api/console/ui/page.tsx', ''),
      sample('api/platform/deps.ts', ''),
    ]
    expect(fileGraph(list).get('api/mail/templates.ts')).toEqual(new Set(['api/console/ui/page.tsx']))
    expect(findCycle(fileGraph(list))).toEqual(['activities/index.ts', 'activities/mail.ts', 'activities/index.ts'])
    list[2] = sample('activities/mail.ts', "import type { ActivityDeps } from './deps'")
    expect(findCycle(fileGraph(list))).toBeNull()
  })

  test('this check imports only the runtime: it needs no server and no build', async () => {
    // Its statements only: the samples above hold imports in strings.
    const statements = (await Bun.file(import.meta.path).text())
      .split('\n')
      .filter((line) => /^(import|export) /.test(line))
      .join('\n')
    expect(specsIn(statements).length).toBeGreaterThan(2)
    expect(specsIn(statements).filter((spec) => !/^(bun|bun:test|node:[a-z]+)$/.test(spec))).toEqual([])
  })
})

/** Tables named by INSERT INTO / UPDATE / DELETE FROM inside a file's template literals (its SQL). */
const writtenTables = (src: string) =>
  new Set(
    [...src.matchAll(/`[^`]*`/g)].flatMap((t) =>
      [...t[0].matchAll(/\b(?:insert\s+into|update|delete\s+from)\s+([a-z_]+)\b/gi)].map((m) => m[1]!.toLowerCase()),
    ),
  )

describe('table ownership', () => {
  test('SQL lives only in queries modules (and the migrations runner); each table is written by exactly one of them', async () => {
    const tables = new Set<string>()
    for (const file of await files('migrations/*.sql')) {
      for (const m of (await Bun.file(join(ROOT, file)).text()).matchAll(/create table (?:if not exists )?([a-z_]+)/gi)) tables.add(m[1]!.toLowerCase())
    }
    expect(tables.size).toBeGreaterThan(20)
    const writers = new Map<string, string[]>()
    for (const { file } of sources) {
      const src = await Bun.file(join(ROOT, file)).text()
      // A tagged template on a connection or transaction is a query.
      const sql = /\b(sql|db|tx)\s*(<[^`>]*>)?`\s*(select|insert|update|delete|with)\b/i.test(src)
      const isQueries = /(^|\/|-)queries\.ts$/.test(file) || file === 'api/platform/migrate.ts'
      expect({ file, inlineSql: sql && !isQueries }).toEqual({ file, inlineSql: false })
      if (!isQueries) continue
      for (const t of writtenTables(src)) if (tables.has(t)) writers.set(t, [...(writers.get(t) ?? []), file])
    }
    for (const [table, by] of writers) expect({ table, writers: by.length === 1 ? 'one' : by }).toEqual({ table, writers: 'one' })
  })
})

describe('the request context, one way', () => {
  // Services learn who acts and from where from the RequestContext the auth macros hand the route (api/identity/
  // context.ts); nothing else may work it out again from the request.
  const domainFiles = sources.filter((s) => /^api\/[^/]+\//.test(s.file) && !/^api\/(http|platform|identity|credentials)\//.test(s.file))

  test('only api/http/request-state.ts reads the client address or the user agent of a request', async () => {
    for (const { file } of sources.filter((s) => s.file.startsWith('api/'))) {
      const src = await Bun.file(join(ROOT, file)).text()
      const reads = /requestIP\(|headers\.get\(\s*['"]user-agent['"]\s*\)|x-forwarded-for/i.test(src)
      expect({ file, reads }).toEqual({ file, reads: reads && file === 'api/http/request-state.ts' })
    }
  })

  test('no service entry point takes the principal alone: it takes ctx (a helper inside a transaction may take a principal)', async () => {
    const offenders: string[] = []
    for (const { file } of domainFiles.filter((s) => !isRoutes(s.file))) {
      const src = await Bun.file(join(ROOT, file)).text()
      for (const m of src.matchAll(
        /export\s+(?:async\s+)?function\s+(\w+)\s*(?:<[^>]*>)?\(([^)]*)\)|export\s+const\s+(\w+)\s*=\s*(?:async\s*)?\(([^)]*)\)\s*=>/g,
      )) {
        const params = m[2] ?? m[4] ?? ''
        const insideTransaction = /^\s*(tx|db)\s*:\s*Db\b/.test(params)
        if (/:\s*Principal\b/.test(params) && !insideTransaction) offenders.push(`${file}: ${m[1] ?? m[3]}`)
      }
    }
    expect(offenders).toEqual([])
  })

  test('routes hand services the context, never the principal', async () => {
    for (const { file } of domainFiles.filter((s) => isRoutes(s.file))) {
      const src = await Bun.file(join(ROOT, file)).text()
      expect({ file, passesPrincipal: /\(deps,\s*principal\s*[,)]/.test(src) }).toEqual({ file, passesPrincipal: false })
    }
  })
})
