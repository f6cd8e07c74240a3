// The console in Chromium against a tenant of 100,000 members (issue 19, "Performance"): `bun bench/console.ts` plus
// the harness's flags (--quick: 3 s a measurement). Results in bench/results/console.json. Rows, each read against
// its baseline measured in the same run:
//  1. First load of the members page: a fresh browser context (empty cache) opens /console#/members signed in, until
//     the first page of rows and the total count are drawn. Target p50 < 1 s. Baseline: the same fresh context
//     loading the console itself (/console: its page, script and stylesheet, static files of this origin) to its load
//     event (the account page of earlier runs is now the console's).
//  2. Every page: a fresh context opens each page of the console in turn (tenants, members, API keys, models,
//     packages, storage, security, webhooks, audit log, my account; the first by a load, the rest by the location
//     hash, as the navigation moves) until its link is current and nothing is still loading; the row's time is the
//     slowest page's. Target p50 < 1 s. Baseline: the console's load, as in 1.
//  3. A search keystroke to updated rows: the last digit of a member's name typed into the search box (the console
//     waits 150 ms for the next key, then asks the server) until the rows of that query are drawn (the box's
//     data-settled names the query the rows answer). Target p50 < 300 ms.
//     Baseline: the same member search (GET /v1/tenants/current/memberships?q=…&pageSize=20) from this process.
// The console is bundled first (scripts/build-console.ts), so the API serves the current sources.
import type { BrowserContext } from 'playwright-core'
import { SESSION_COOKIE } from '../api/http/auth'
import { bundle } from '../scripts/build-console'
import { launchChromium } from '../test/support/chromium'
import { PAGES, signedContext, untilInteractive, type Signed } from './console-pages'
import { benchmark, type Measure, type Sample } from './harness'
import { ownerIn, seedMembers } from './rows'
import { quantile } from './one-at-a-time'

/** Timings (ms) of `once` repeated for the harness's duration: their rate, p50 and p99. */
async function timed(seconds: number, once: (i: number) => Promise<number>): Promise<Sample> {
  const times: number[] = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until || times.length < 5) times.push(await once(times.length))
  times.sort((a, b) => a - b)
  return { rate: times.length / seconds, p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) }
}

await benchmark('console', {}, async (h) => {
  const built = await bundle()
  console.log(`console bundle: ${built.script}, ${(built.gzipBytes / 1024).toFixed(1)} KiB gzip`)
  const api = await h.api((await h.postgres()).url)
  const browser = await launchChromium()
  h.own({ stop: () => browser.close() })
  const { session, tenantId } = await ownerIn(api)
  if (!session.cookie?.startsWith(`${SESSION_COOKIE}=`)) throw new Error('no session cookie')
  await seedMembers(api.databaseUrl, tenantId)
  const signed: Signed = { session, browser }
  const seconds = h.settings.duration
  // What a person types to find someone: a name with a number, the keystroke being its last digit (a dozen matches).
  const queries = Array.from({ length: 50 }, (_, i) => `Member ${4001 + 37 * i}`)

  const shellLoad: Measure = {
    name: 'GET /console, fresh context, to load (baseline)',
    run: () =>
      timed(seconds, async () => {
        const context = await signedContext(api, signed)
        try {
          const page = await context.newPage()
          const t = performance.now()
          await page.goto(`${api.url}/console`, { waitUntil: 'load' })
          return performance.now() - t
        } finally {
          await context.close()
        }
      }),
  }
  const apiSearch: Measure = {
    name: 'GET /v1/tenants/current/memberships?q= (100k, the search itself, baseline)',
    run: () =>
      timed(seconds, async (i) => {
        const t = performance.now()
        const res = await fetch(`${api.url}/v1/tenants/current/memberships?pageSize=20&q=${encodeURIComponent(queries[i % queries.length]!)}`, {
          headers: { cookie: session.cookie! },
        })
        if (res.status !== 200) throw new Error(`search answered ${res.status}`)
        await res.arrayBuffer()
        return performance.now() - t
      }),
  }
  const firstLoad: Measure = {
    name: 'console members page, fresh context, to rows and count drawn (100k members)',
    maxP50Ms: 1000,
    targetOf: shellLoad.name,
    run: () =>
      timed(seconds, async () => {
        const context = await signedContext(api, signed)
        try {
          const page = await context.newPage()
          const t = performance.now()
          await page.goto(`${api.url}/console#/members`)
          await page.locator('#member-count', { hasText: '100001 members' }).waitFor({ timeout: 30_000 })
          await page.locator('tbody tr').nth(19).waitFor()
          return performance.now() - t
        } finally {
          await context.close()
        }
      }),
  }
  const everyPage: Measure = {
    name: 'every console page, fresh context, the slowest to its content drawn',
    maxP50Ms: 1000,
    targetOf: shellLoad.name,
    run: () =>
      timed(seconds, async () => {
        const context = await signedContext(api, signed)
        try {
          const page = await context.newPage()
          let slowest = 0
          for (const route of PAGES) {
            const t = performance.now()
            await page.goto(`${api.url}/console#/${route}`)
            await untilInteractive(page, route)
            slowest = Math.max(slowest, performance.now() - t)
          }
          return slowest
        } finally {
          await context.close()
        }
      }),
  }
  let searchContext: BrowserContext | undefined
  const keystroke: Measure = {
    name: 'console members search, a keystroke to updated rows (100k members)',
    maxP50Ms: 300,
    targetOf: apiSearch.name,
    async setup() {
      searchContext = await signedContext(api, signed)
      const page = await searchContext.newPage()
      await page.goto(`${api.url}/console#/members`)
      await page.locator('#member-count', { hasText: '100001 members' }).waitFor({ timeout: 30_000 })
    },
    run: () =>
      timed(seconds, async (i) => {
        const page = searchContext!.pages()[0]!
        const box = page.getByLabel('Search by name or email')
        const q = queries[i % queries.length]!
        await box.fill(q.slice(0, -1))
        await page.waitForFunction((prefix) => document.getElementById('member-search')?.getAttribute('data-settled') === prefix, q.slice(0, -1).trim())
        const t = performance.now()
        await box.press(q.at(-1)!)
        await page.waitForFunction((query) => document.getElementById('member-search')?.getAttribute('data-settled') === query, q)
        return performance.now() - t
      }),
  }
  return { baselines: [shellLoad, apiSearch], rows: [firstLoad, everyPage, keystroke] }
})
