// "A minor Elysia upgrade needs no change of ours beyond the lockfile" (issue 35). Two halves: no file of ours reaches
// into Elysia's internals (a static check over the tree, which fails on any such access whatever the installed
// version), and the documented behaviour the conventions plugin is built on holds (a bare Elysia, no server), so an
// upgrade that changes it fails here, by name, before any route test does.
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { join, relative } from 'node:path'
import { Elysia, t } from 'elysia'

const ROOT = join(import.meta.dir, '..', '..')
const SELF = relative(ROOT, import.meta.path)

/** What reaching into Elysia looks like. Each pattern names an internal, not a version. */
const INTERNALS: { what: string; re: RegExp; inElysiaFilesOnly?: boolean }[] = [
  {
    what: "a deep import of elysia ('elysia/dist/…', 'elysia/compose', …): only the package root is documented",
    re: /(?:from\s+|import\(\s*|require\(\s*)['"]elysia\/[^'"]*['"]/,
  },
  { what: 'a hook container field (isAsync, hasReturn, subType): Elysia stores its own hooks as { fn, isAsync, … }', re: /\b(?:isAsync|hasReturn|subType)\b/ },
  { what: "a '~'-prefixed field (Elysia's internal '~Routes', '~parser', '~adapter', …)", re: /\[\s*['"`]~/ },
  {
    what: "an instance's internal state (event, router, history, extender, inference, singleton, definitions, dependencies, standaloneValidator)",
    re: /\.(?:event|router|history|extender|inference|singleton|definitions|dependencies|standaloneValidator|getGlobalRoutes|getGlobalDefinitions)\b/,
    inElysiaFilesOnly: true,
  },
  { what: "wrap(), which Elysia's types mark @private (DO_NOT_USE)", re: /\.wrap\(/, inElysiaFilesOnly: true },
]

/** A file works with Elysia when it imports it, a plugin of it, or the app or conventions built on it. */
const touchesElysia = (src: string) => /from\s+['"](?:elysia|@elysiajs\/[^'"]+|[^'"]*\/api\/app|[^'"]*\/http\/plugin|\.\/app|\.\.\/app)['"]/.test(src)

/** Each line of `src` that reaches an internal, with what it reaches. */
function internalAccesses(src: string): { line: number; what: string; text: string }[] {
  const elysia = touchesElysia(src)
  const found: { line: number; what: string; text: string }[] = []
  for (const [i, text] of src.split('\n').entries()) {
    for (const { what, re, inElysiaFilesOnly } of INTERNALS) {
      if (inElysiaFilesOnly && !elysia) continue
      if (re.test(text)) found.push({ line: i + 1, what, text: text.trim() })
    }
  }
  return found
}

describe('no code of ours depends on an internal shape of Elysia', () => {
  test('nothing under api/, worker/, activities/, workflows/, bench/, scripts/ or test/ reaches into Elysia', async () => {
    const files = await Array.fromAsync(new Glob('{api,worker,activities,workflows,bench,scripts,test}/**/*.{ts,tsx}').scan({ cwd: ROOT }))
    expect(files.length).toBeGreaterThan(200)
    const offences: string[] = []
    for (const file of files.filter((f) => f !== SELF && !f.endsWith('.gen.ts'))) {
      for (const a of internalAccesses(await Bun.file(join(ROOT, file)).text())) offences.push(`${file}:${a.line}: ${a.what}\n    ${a.text}`)
    }
    expect(offences).toEqual([])
  })

  test('the check finds each kind of internal access (so a green result means something)', () => {
    const app = "import { Elysia } from 'elysia'\n"
    expect(internalAccesses("import { isAsync } from 'elysia/dist/compose'")).toHaveLength(2)
    expect(internalAccesses("const { composeHandler } = require('elysia/compose')")).toHaveLength(1)
    expect(internalAccesses('export const sync = (fn) => ({ fn, isAsync: false })')).toHaveLength(1)
    expect(internalAccesses("app['~parser'].json = parse")).toHaveLength(1)
    expect(internalAccesses("type Routes = (typeof app)['~Routes']")).toHaveLength(1)
    expect(internalAccesses(`${app}expect(app.event.request).toHaveLength(1)`)).toHaveLength(1)
    expect(internalAccesses(`${app}app.router.history.find((r) => r.path === '/')`)).toHaveLength(1)
    expect(internalAccesses(`${app}const fns = (app as any).extender.higherOrderFunctions`)).toHaveLength(1)
    expect(internalAccesses(`${app}app.wrap((handle) => handle)`)).toHaveLength(1)
    // Not Elysia's: the same words on other objects, in files that do not touch Elysia.
    expect(internalAccesses('const kinds = lines.filter((e) => e.event === "inference")')).toEqual([])
    expect(internalAccesses(`${app}app.get('/', () => 'ok').listen({ port: 0 }).server?.port`)).toEqual([])
  })
})

// The conventions plugin (api/http/plugin.ts) rests on these documented behaviours (elysiajs.com: Life Cycle, Macro,
// Plugin deduplication). Each test names the one it checks.
describe('the documented Elysia behaviour the conventions rely on', () => {
  const get = (app: { handle: (r: Request) => Promise<Response> }, path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init))

  test("a macro's transform runs before validation, and what it throws reaches onError: a credential is refused before the body is read", async () => {
    const checked: string[] = []
    const app = new Elysia()
      .onError(({ error }) => new Response((error as Error).message, { status: 401 }))
      .macro({
        guarded: {
          transform() {
            checked.push('transform')
            throw new Error('no credential')
          },
        },
      })
      .post('/x', () => 'ran', { guarded: true, body: t.Object({ n: t.Number() }) })
    const res = await get(app, '/x', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":"not a number"}' })
    expect({ status: res.status, text: await res.text(), checked }).toEqual({ status: 401, text: 'no credential', checked: ['transform'] })
  })

  test("an async transform is awaited before validation and the handler; a macro's resolve is merged into the handler's context", async () => {
    const order: string[] = []
    const seen = new WeakMap<Request, string>()
    const app = new Elysia()
      .macro({
        who: {
          async transform({ request }) {
            await Bun.sleep(5)
            order.push('transform')
            seen.set(request, request.headers.get('x-who') ?? 'nobody')
          },
          resolve({ request }) {
            order.push('resolve')
            const who = seen.get(request)!
            return { who }
          },
        },
      })
      .get(
        '/x',
        ({ who }) => {
          order.push('handler')
          return who
        },
        { who: true },
      )
    const res = await get(app, '/x', { headers: { 'x-who': 'ada' } })
    expect(await res.text()).toBe('ada')
    expect(order).toEqual(['transform', 'resolve', 'handler'])
  })

  test('a plugin with a name and seed used by several instances registers its global hooks once; another seed is another plugin', async () => {
    let calls = 0
    const plugin = (seed: number) =>
      new Elysia({ name: 'conventions', seed })
        .onRequest(() => {
          calls++
        })
        .as('global')
    const shared = plugin(1)
    const app = new Elysia()
      .use(shared)
      .use(new Elysia({ prefix: '/a' }).use(shared).get('/', () => 'a'))
      .use(new Elysia({ prefix: '/b' }).use(shared).get('/', () => 'b'))
    await get(app, '/a')
    await get(app, '/b')
    expect(calls).toBe(2)
    const two = new Elysia()
      .use(plugin(1))
      .use(plugin(2))
      .get('/', () => 'x')
    calls = 0
    await get(two, '/')
    expect(calls).toBe(2)
  })
})
