// The addresses the account page and its mailed links had before the console served them: each redirects to the
// console's page with its query exactly as sent (encoding, order, repeated and empty parameters), so a link in mail
// already sent still works. What the pages then do is test/console/links.test.ts.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'

const api = useApi()

const QUERIES = ['', '?token=abc', '?token=a%2Fb%2Bc%3D%3D&x=1&x=2&empty=&flag', '?token=_-.~%20%25']
const MOVED: [string, (query: string) => string][] = [
  ['/password-reset', (q) => `/console/password-reset${q}`],
  ['/activate', (q) => `/console/activate${q}`],
  ['/registration', (q) => `/console/registration${q}`],
  ['/account', (q) => `/console${q}#/account`],
]

describe('old links redirect to the console', () => {
  test.each(MOVED)('%s', async (path, to) => {
    for (const query of QUERIES) {
      const res = await fetch(`${api.url}${path}${query}`, { redirect: 'manual' })
      expect({ query, status: res.status, location: res.headers.get('location') }).toEqual({ query, status: 302, location: to(query) })
      expect(res.headers.get('cache-control')).toBe('no-store')
    }
  })

  test('every page redirected to is the console, with its CSP; the old page and its scripts are gone', async () => {
    for (const [, to] of MOVED) {
      const res = await fetch(`${api.url}${to('?token=abc').replace(/#.*$/, '')}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('referrer-policy')).toBe('no-referrer') // the token never leaves in a Referer
      expect(await res.text()).toContain('/console/assets/')
    }
    for (const gone of ['/account/page.js', '/account/links.js', '/account/page.css', '/account/webauthn.js']) {
      expect({ gone, status: (await fetch(`${api.url}${gone}`)).status }).toEqual({ gone, status: 404 })
    }
  })

  test('the HTML routes, old and new, are hidden from the OpenAPI document', async () => {
    const paths = Object.keys((await (await fetch(`${api.url}/v1/openapi.json`)).json()).paths)
    expect(paths.length).toBeGreaterThan(50)
    expect(paths.filter((p) => !p.startsWith('/v1/'))).toEqual([])
  })
})
