// The console's pages as the benchmarks open them (bench/console.ts on an idle platform, bench/mixed-load.ts under
// load): a signed-in browser context and what "interactive" means for a page.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { BenchContext } from './harness'

export const PAGES = ['tenants', 'members', 'api-keys', 'models', 'packages', 'storage', 'security', 'webhooks', 'audit', 'account']

export interface Signed {
  session: Record<string, string>
  browser: Browser
}

/** A fresh context (no cache) holding the owner's session cookie and, in the tab, its CSRF token. */
export async function signedContext(ctx: BenchContext, s: Signed): Promise<BrowserContext> {
  const context = await s.browser.newContext()
  const [name, value] = s.session.cookie!.split('=') as [string, string]
  await context.addCookies([{ name, value, url: ctx.url }])
  await context.addInitScript((token: string) => sessionStorage.setItem('csrf', token), s.session['x-csrf-token']!)
  return context
}

/** Interactive: the page's navigation link is current and nothing on it is still loading. */
export async function untilInteractive(page: Page, route: string, timeoutMs = 30_000): Promise<void> {
  await page.locator(`nav a[href="#/${route}"][aria-current="page"]`).waitFor({ timeout: timeoutMs })
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: timeoutMs })
}
