// Every HTML page this origin serves carries a strict Content-Security-Policy (no inline script, no framing), and the
// console page names only its own hashed assets.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { LINK_PAGES } from '../../api/console/routes'
import { useApi } from '../support/api'

const api = useApi()

const PAGES = ['/console', '/invitations/accept', '/v1/docs', ...Object.values(LINK_PAGES)]

describe('CSP on every HTML response', () => {
  test.each(PAGES)('%s', async (path) => {
    const res = await fetch(`${api.url}${path}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const csp = res.headers.get('content-security-policy') ?? ''
    for (const d of ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"])
      expect({ path, csp, has: csp.includes(d) }).toMatchObject({ has: true })
    expect(csp).not.toContain('unsafe')
    const html = await res.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/) // every script has a src: none is inline
    expect(html).not.toMatch(/\son[a-z]+=/i) // no inline handler
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//) // nothing from another origin
  })

  test("docs/api.md states the console's policy as it is sent", async () => {
    const readme = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'api.md')).text()
    const stated = /\*\*CSP\*\*: `\/console`: `([^`]+)`/.exec(readme.replace(/\n\s+/g, ' '))?.[1]
    expect(stated).toBe((await fetch(`${api.url}/console`)).headers.get('content-security-policy')!)
  })

  test('the console page names its hashed script and stylesheet, served for good with the same CSP', async () => {
    const html = await (await fetch(`${api.url}/console`)).text()
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!)
    expect(assets.map((a) => a.split('.').pop()).sort()).toEqual(['css', 'js'])
    for (const a of assets) {
      const res = await fetch(`${api.url}${a}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toContain('immutable')
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    }
    expect((await fetch(`${api.url}/console/assets/..%2Fdist%2Findex.html`)).status).toBe(404)
    expect((await fetch(`${api.url}/console/assets/nothing-here.js`)).status).toBe(404)
  })
})
