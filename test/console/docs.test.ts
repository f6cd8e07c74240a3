// The API reference at /v1/docs, rendered offline in Chromium: every operation of our document, nothing fetched from
// another origin, a strict CSP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startApi, type TestApi } from '../support/api'
import { releaseChromium, sharedChromium } from '../support/chromium'
import { expectClean, guardedPage, screenshot, seriousViolations } from './browser'

let api: TestApi
let browser: Browser

beforeAll(async () => {
  ;[api, browser] = await Promise.all([startApi(), sharedChromium()])
}, 120_000)

afterAll(async () => {
  await releaseChromium(browser)
  await api?.stop()
})

describe('/v1/docs', () => {
  test('is served from our origin with a strict CSP, its files pinned by the package, no CDN named', async () => {
    const res = await fetch(`${api.url}/v1/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    const html = await res.text()
    expect(html).not.toMatch(/https?:\/\//)
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/) // no inline script
    const bundle = await fetch(`${api.url}/v1/docs/swagger-ui-bundle.js`)
    const pinned = (await Bun.file('node_modules/swagger-ui-dist/package.json').json()).version
    expect({ status: bundle.status, pinned }).toEqual({ status: 200, pinned: '5.35.0' })
    expect(await bundle.text()).toContain('SwaggerUIBundle')
    const init = await (await fetch(`${api.url}/v1/docs/init.js`)).text()
    expect(init).toContain('validatorUrl: null')
  })

  test('renders an entry for every operation of /v1/openapi.json, offline', async () => {
    type Ops = Record<string, Record<string, unknown>>
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as { paths: Ops; webhooks: Ops }
    // The operations, and the event catalogue's webhooks (Swagger UI lists each under its event type).
    const entries = (ops: Ops) => Object.entries(ops).flatMap(([path, byMethod]) => Object.keys(byMethod).map((m) => `${m.toUpperCase()} ${path}`))
    const expected = [...entries(doc.paths), ...entries(doc.webhooks)].sort()
    expect(Object.keys(doc.paths).length).toBeGreaterThan(70)
    expect(Object.keys(doc.webhooks).length).toBeGreaterThan(5)
    const g = await guardedPage(browser, api.url)
    try {
      await g.page.goto(`${api.url}/v1/docs`)
      await g.page.locator('.opblock').first().waitFor({ timeout: 30_000 })
      // Swagger UI renders the operations over several frames: wait for as many entries as the document has.
      await g.page.waitForFunction((n) => document.querySelectorAll('.opblock-summary').length >= n, expected.length, { timeout: 30_000 }).catch(() => {}) // the comparison below names what is missing
      const rendered = await g.page.$$eval('.opblock-summary', (els) =>
        els.map((el) => {
          const method = el.querySelector('.opblock-summary-method')?.textContent?.trim() ?? ''
          const path = el.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''
          return `${method} ${path}`
        }),
      )
      expect([...new Set(rendered)].sort()).toEqual(expected)
      expect(await seriousViolations(g.page)).toEqual([])
      await screenshot(g.page, 'docs')
      expectClean(g)
    } finally {
      await g.close()
    }
  }, 90_000)
})
