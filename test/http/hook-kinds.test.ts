// The hook kinds write Elysia's internal HookContainer `isAsync` (api/http/hook-kinds.ts). Nothing documents it, so
// these tests pin the Elysia release it was checked against and prove, through the handlers Elysia compiles, that
// the declared kind beats Elysia's guess from the source text, in both directions.
import { describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { awaited, CHECKED_WITH_ELYSIA, sync, syncMerging } from '../../api/http/hook-kinds'
import elysiaPackage from '../../node_modules/elysia/package.json'

const RECHECK = `api/http/hook-kinds.ts was checked against Elysia ${CHECKED_WITH_ELYSIA}, installed is ${elysiaPackage.version}. ` +
  'Re-check node_modules/elysia/dist/compose.mjs: isAsync() must still return a hook container\'s own `isAsync` before ' +
  'guessing from the source text, and onRequest/onError/transform hooks must still be stored as { fn, isAsync } ' +
  'containers. Then run this file and set CHECKED_WITH_ELYSIA to the new version.'

const get = (app: { fetch: (r: Request) => Response | Promise<Response> }, path = '/') => app.fetch(new Request(`http://localhost${path}`))

// Source text Elysia reads as "may return a promise": an arrow whose body is a call (`=> f(`).
const noted: string[] = []
const note = (url: string): void => { noted.push(url) }
const looksAsync = (c: { request: Request }) => note(c.request.url)

// Source text Elysia reads as sync (no call right after `=>`/`return`, no async keyword), yet it returns a promise.
// (Bun's transpiler folds `const p = f(); return p` into `return f(`, which Elysia would read as async.)
function looksSync(c: { request: Request }) {
  return new Promise((resolve) => {
    resolve({ fromHook: new URL(c.request.url).pathname })
  })
}

describe('the hook kinds against the installed Elysia', () => {
  test('the installed Elysia is the release hook-kinds.ts was checked against', () => {
    if (elysiaPackage.version !== CHECKED_WITH_ELYSIA) throw new Error(RECHECK)
  })

  test('sync: a request hook whose source looks async is called without await (the app answers without a promise)', () => {
    const guessed = new Elysia().onRequest(looksAsync).get('/', () => 'ok')
    guessed.compile()
    expect(get(guessed), `control: Elysia no longer guesses "async" for \`=> f(\`; pick another source text. ${RECHECK}`).toBeInstanceOf(Promise)

    const declared = new Elysia().onRequest(sync(looksAsync)).get('/', () => 'ok')
    const stored = (declared as unknown as { event: { request: { fn: unknown; isAsync?: boolean }[] } }).event.request
    expect(stored, RECHECK).toMatchObject([{ fn: looksAsync, isAsync: false }])
    declared.compile()
    noted.length = 0
    const res = get(declared)
    expect(res, RECHECK).toBeInstanceOf(Response)
    expect(noted).toEqual(['http://localhost/'])
  })

  test('awaited: a transform whose source looks sync is awaited, and what it resolves to is merged into the context', async () => {
    const handler = (c: object) => ({ fromHook: (c as { fromHook?: string }).fromHook ?? null })
    const guessed = new Elysia().get('/t', handler, { transform: looksSync as (c: unknown) => void })
    guessed.compile()
    expect(await (await get(guessed, '/t')).json(), `control: Elysia now guesses "async" for this source; pick another. ${RECHECK}`).toEqual({ fromHook: null })

    const declared = new Elysia().get('/t', handler, { transform: awaited(looksSync) })
    declared.compile()
    expect(await (await get(declared, '/t')).json(), RECHECK).toEqual({ fromHook: '/t' })
  })

  test('syncMerging: a transform whose source looks async is called without await, and what it returns is merged', () => {
    const merge = (c: { request: Request }) => Object.assign({}, { fromHook: new URL(c.request.url).pathname })
    const handler = (c: object) => (c as { fromHook?: string }).fromHook ?? 'none'
    const guessed = new Elysia().get('/m', handler, { transform: merge as (c: unknown) => void })
    guessed.compile()
    expect(get(guessed, '/m'), `control: Elysia no longer guesses "async" for \`=> f(\`; pick another source text. ${RECHECK}`).toBeInstanceOf(Promise)

    const declared = new Elysia().get('/m', handler, { transform: syncMerging(merge) })
    declared.compile()
    const res = get(declared, '/m')
    expect(res, RECHECK).toBeInstanceOf(Response)
    return (res as Response).text().then((text) => expect(text).toBe('/m'))
  })
})
