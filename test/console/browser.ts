// Guards every console test page carries: a request to any other origin is refused and recorded, dialogs and
// script errors (a CSP refusal is one) are recorded, and so is every 4xx answer of our origin the test did not say it
// expects (a page that meets an unexpected 401 or 403 is not clean); axe-core runs in the page; screenshots go to a
// gitignored folder.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { localhostOrigin, startApi, type TestApi } from '../support/api'
import { releaseChromium, sharedChromium } from '../support/chromium'
import { PASSWORD } from '../support/fixtures'

const ROOT = join(import.meta.dir, '..', '..')
const AXE = await Bun.file(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js')).text()
export const SCREENSHOTS = join(ROOT, 'test-results', 'console')

/** A 4xx answer of our origin a test expects the page to meet: its status, the path it answers (without the query)
 *  and, if it matters, the method. */
export interface Expected4xx {
  status: number
  path: string | RegExp
  method?: string
}

export interface GuardedPage {
  page: Page
  /** URLs outside the origin the page tried to reach. */
  foreign: string[]
  dialogs: string[]
  errors: string[]
  /** 4xx answers of our origin no expectation covered, as `status METHOD path`. */
  unexpected4xx: string[]
  /** Declares 4xx answers the page may meet from now on; the returned function withdraws them. */
  expect4xx(...expected: Expected4xx[]): () => void
  close(): Promise<void>
}

const covers = (e: Expected4xx, status: number, method: string, path: string) =>
  e.status === status && (!e.method || e.method === method) && (typeof e.path === 'string' ? e.path === path : e.path.test(path))

/** `alsoAllowed`: origins a flow must visit on purpose (an identity provider's sign-in pages); nothing else. */
export async function guardedPage(browser: Browser, origin: string, permissions: string[] = [], alsoAllowed: string[] = []): Promise<GuardedPage> {
  const context = await browser.newContext()
  if (permissions.length > 0) await context.grantPermissions(permissions, { origin })
  const page = await context.newPage()
  const expected = new Set<Expected4xx>()
  const g: GuardedPage = {
    page,
    foreign: [],
    dialogs: [],
    errors: [],
    unexpected4xx: [],
    close: () => context.close(),
    expect4xx(...list) {
      for (const e of list) expected.add(e)
      return () => {
        for (const e of list) expected.delete(e)
      }
    },
  }
  page.on('response', (r) => {
    const status = r.status()
    const url = new URL(r.url())
    if (status < 400 || status >= 500 || url.origin !== origin) return
    const method = r.request().method()
    if (![...expected].some((e) => covers(e, status, method, url.pathname))) g.unexpected4xx.push(`${status} ${method} ${url.pathname}`)
  })
  await page.route('**', (route) => {
    const url = route.request().url()
    const to = new URL(url).origin
    if (to === origin || alsoAllowed.includes(to)) return route.continue()
    // What an allowed origin's own pages fetch is theirs to answer for: refused, not held against ours.
    if (alsoAllowed.includes(new URL(route.request().frame().url()).origin)) return route.abort('blockedbyclient')
    g.foreign.push(url)
    return route.abort('blockedbyclient')
  })
  page.on('dialog', (d) => {
    g.dialogs.push(d.message())
    void d.dismiss()
  })
  page.on('pageerror', (e) => g.errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() !== 'error' || isExpectedFailure(m.text()) || alsoAllowed.includes(new URL(page.url()).origin)) return
    g.errors.push(m.text())
  })
  return g
}

/** The browser logs every non-2xx fetch as a console error; the pages show those problems themselves (tested), and the
 *  4xx among them are held against the page by the response guard unless the test expects them. */
const isExpectedFailure = (text: string) => /^Failed to load resource: the server responded with a status of (4\d\d)/.test(text)

/** Nothing left the origin, no dialog opened, no script failed (or was refused by the CSP), no 4xx the test did not
 *  expect. */
export function expectClean(g: GuardedPage) {
  expect({ foreign: g.foreign, dialogs: g.dialogs, errors: g.errors, unexpected4xx: g.unexpected4xx }).toEqual({
    foreign: [],
    dialogs: [],
    errors: [],
    unexpected4xx: [],
  })
}

/** What a signed-out console meets on load: its probe of the session and of the account answers 401. */
export const SIGNED_OUT: Expected4xx[] = [
  { status: 401, method: 'GET', path: '/v1/sessions/current' },
  { status: 401, method: 'GET', path: '/v1/users/me' },
]

/** axe-core over the page as it is; returns the serious and critical violations (ids and the first targets). Injected
 *  through the DevTools protocol (page.evaluate), which the page's CSP does not govern, so the CSP stays on. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE)
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(ctx: Document, opts: object): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown[] }[] }[] }> }
      }
    ).axe
    const r = await axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)) }))
  })
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(' ')}`)
}

export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** One API on a localhost origin (with `settings`, read when it starts, given that origin) and the process's shared
 *  Chromium, whose contexts the file's end closes. Read the fields inside tests. */
export function useConsole(settings: (origin: string) => Record<string, string> = () => ({})): { api: TestApi; browser: Browser; origin: string } {
  const env = {} as { api: TestApi; browser: Browser; origin: string }
  beforeAll(async () => {
    const { port, origin } = localhostOrigin()
    const [api, browser] = await Promise.all([startApi({ PORT: String(port), PUBLIC_URL: origin, ...settings(origin) }), sharedChromium()])
    Object.assign(env, { api, browser, origin })
  }, 120_000)
  afterAll(async () => {
    await releaseChromium(env.browser)
    await env.api?.stop()
  })
  return env
}

/** Signs in through the console's own form and waits for the signed-in shell. */
export async function signInAs(g: GuardedPage, origin: string, email: string, password = PASSWORD) {
  const signedOut = g.expect4xx(...SIGNED_OUT)
  await g.page.goto(`${origin}/console`)
  await g.page.getByLabel('Email').fill(email)
  await g.page.getByLabel('Password').fill(password)
  await g.page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await g.page.locator('#sign-out').waitFor({ timeout: 10_000 })
  signedOut() // signed in: a 401 from here on is not expected
}

/** A passkey authenticator built into the page's browser (DevTools' virtual authenticator): it answers WebAuthn
 *  ceremonies with user presence and verification, as a platform authenticator would. */
export async function addPasskeyAuthenticator(g: GuardedPage) {
  const cdp = await g.page.context().newCDPSession(g.page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
}

/** Opens a page of the console by its navigation link and waits for its heading. */
export async function openPage(g: GuardedPage, title: string) {
  await g.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: title }).click()
  await g.page.getByRole('heading', { level: 1, name: title }).waitFor({ timeout: 10_000 })
}

/** Axe, a screenshot and the clean-page check, for the page as it is now. */
export async function auditPage(g: GuardedPage, name: string) {
  await g.page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: 10_000 })
  expect(await g.page.locator('main').count()).toBe(1)
  expect({ name, violations: await seriousViolations(g.page) }).toEqual({ name, violations: [] })
  await screenshot(g.page, name)
  expectClean(g)
}

export const HOSTILE = '<img src=x onerror=alert(1)>'

/** A fresh guarded page signed in as `email` and opened at the console page `title`; `fn` drives it, then the page
 *  must be clean (nothing off-origin, no dialog, no script error) and is closed. */
export async function onConsolePage(
  env: { browser: Browser; origin: string },
  email: string,
  title: string,
  fn: (g: GuardedPage) => Promise<void>,
  permissions: string[] = [],
  expected4xx: Expected4xx[] = [],
) {
  const g = await guardedPage(env.browser, env.origin, permissions)
  g.expect4xx(...expected4xx)
  try {
    await signInAs(g, env.origin, email)
    await openPage(g, title)
    await fn(g)
    expectClean(g)
  } finally {
    await g.close()
  }
}
