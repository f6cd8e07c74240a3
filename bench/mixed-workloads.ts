// The workloads of bench/mixed-load.ts. Each runs for a given number of seconds, alone (its solo figure) or beside
// the others (the mixed phase), and answers the same outcome: its rate, latencies, and every error counted by kind.
// An error is anything a client would notice: a 5xx, any status other than the one expected, a timeout, a socket
// error; for the asynchronous workloads also a build that fails or never finishes, a delivery that never arrives,
// arrives twice or does not verify, a console page that does not become interactive or saw a 5xx.
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { spawnChild } from '../scripts/platform'
import type { Delivery, Receiver } from '../test/support/webhook-receiver'
import { PAGES, signedContext, untilInteractive } from './console-pages'
import { ROOT, type BenchContext } from './harness'

/** Every request of a workload gives up after this long: a timeout is an error. */
export const REQUEST_TIMEOUT_MS = 10_000
const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : undefined)

export interface Outcome {
  rate: number
  unit: string
  p50Ms?: number
  p99Ms?: number
  errors: Record<string, number>
  example?: string
  /** Per console page: its load times (ms). */
  pages?: Record<string, number[]>
  detail?: string
}

export interface Workload {
  name: string
  run(seconds: number): Promise<Outcome>
}

/** Counts one run's successes (with their latency) and errors by kind, keeping the first error's text. */
class Tally {
  ok = 0
  latencies: number[] = []
  errors: Record<string, number> = {}
  example = ''
  pass(ms?: number) {
    this.ok++
    if (ms !== undefined) this.latencies.push(ms)
  }
  fail(kind: string, detail: string) {
    this.errors[kind] = (this.errors[kind] ?? 0) + 1
    this.example ||= `${kind}: ${detail}`.slice(0, 400)
  }
  outcome(seconds: number, unit: string, extra: Partial<Outcome> = {}): Outcome {
    const sorted = [...this.latencies].sort((a, b) => a - b)
    return {
      rate: this.ok / seconds,
      unit,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99),
      errors: this.errors,
      example: this.example || undefined,
      ...extra,
    }
  }
}

/** One HTTP request: its JSON when the status is `expect`, undefined (and the error counted) otherwise. */
async function request(tally: Tally, url: string, init: RequestInit & { expect: number }): Promise<any> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    const text = await res.text()
    if (res.status === init.expect) return text ? JSON.parse(text) : {}
    tally.fail(res.status >= 500 ? '5xx' : 'unexpected status', `${init.method ?? 'GET'} ${new URL(url).pathname} ${res.status} ${text.slice(0, 200)}`)
  } catch (err) {
    const e = err as Error
    tally.fail(e.name === 'TimeoutError' ? 'timeout' : 'socket error', `${init.method ?? 'GET'} ${new URL(url).pathname} ${e.message}`)
  }
  return undefined
}

/** `n` loops calling `once(loop)` until the deadline; a call in flight at the deadline finishes. */
async function loops(n: number, seconds: number, once: (loop: number) => Promise<void>) {
  const deadline = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: n }, async (_, loop) => {
      while (performance.now() < deadline) await once(loop)
    }),
  )
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
})

/** (1) Password sign-ins: `n` closed loops, each signing in its own user (one argon2id verification each). */
export function signIns(api: BenchContext, users: { email: string; password: string }[]): Workload {
  return {
    name: `password sign-ins (${users.length} loops)`,
    async run(seconds) {
      const t = new Tally()
      await loops(users.length, seconds, async (loop) => {
        const t0 = performance.now()
        if (await request(t, `${api.url}/v1/sessions`, { ...json(users[loop]), expect: 201 })) t.pass(performance.now() - t0)
      })
      return t.outcome(seconds, 'sign-ins/s')
    },
  }
}

/** (2) PAT reads at a fixed rate, open loop, from a process of their own (bench/open-loop.ts). */
export function patReads(api: BenchContext, headers: Record<string, string>, rate: number): Workload {
  return {
    name: `GET /v1/tokens/self (PAT), open loop at ${rate}/s`,
    async run(seconds) {
      const child = spawnChild('open-loop', {
        cmd: [process.execPath, join(ROOT, 'bench/open-loop.ts')],
        pipe: true,
        env: {
          ...process.env,
          RCP_OPEN_LOOP: JSON.stringify({ url: `${api.url}/v1/tokens/self`, headers, rate, seconds, timeoutMs: REQUEST_TIMEOUT_MS, expect: 200 }),
        },
      })
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
      const line = out.trim().split('\n').at(-1)
      if (code !== 0 || !line?.startsWith('{')) throw new Error(`bench/open-loop.ts exited ${code}: ${out}${err}`)
      const r = JSON.parse(line)
      const { ok = 0, ...errors } = r.outcomes as Record<string, number>
      return {
        rate: ok / seconds,
        unit: 'reads/s',
        p50Ms: r.p50Ms,
        p99Ms: r.p99Ms,
        errors,
        example: r.example || undefined,
        detail: `p90 ${r.p90Ms.toFixed(1)} ms, p99.9 ${r.p999Ms.toFixed(1)} ms, max ${r.maxMs.toFixed(1)} ms; p99 per minute ${r.perMinuteP99.map((x: number) => x.toFixed(1)).join(', ')} ms`,
      }
    },
  }
}

/** (3) Member pages of a 100,000-member tenant: `n` closed loops over filtered first pages (each with its
 *  totalCount) and the page after each. */
export function memberPages(api: BenchContext, headers: Record<string, string>, n: number): Workload {
  const queries = ['role=viewer&status=active', 'role=admin&sortBy=email', 'status=disabled&sortBy=displayName', 'q=Member%2012', 'role=researcher&q=example']
  return {
    name: `member pages, 100k members, filtered + totalCount (${n} loops)`,
    async run(seconds) {
      const t = new Tally()
      let i = 0
      await loops(n, seconds, async () => {
        let path = `/v1/tenants/current/memberships?pageSize=25&${queries[i++ % queries.length]}`
        for (let page = 0; page < 2; page++) {
          const t0 = performance.now()
          const body = await request(t, `${api.url}${path}`, { headers, expect: 200 })
          if (!body) return
          if (typeof body.meta?.totalCount !== 'number' || !Array.isArray(body.data)) return t.fail('unexpected body', JSON.stringify(body).slice(0, 200))
          t.pass(performance.now() - t0)
          if (!body.nextPageToken) return
          path = `${path.split('&pageToken=')[0]}&pageToken=${encodeURIComponent(body.nextPageToken)}`
        }
      })
      return t.outcome(seconds, 'pages/s')
    },
  }
}

/** (4) Edge package builds through the API: `n` loops, each requesting a package of a small ready model version
 *  and polling it until ready. The rate counts builds ready before the deadline; those in flight then are waited
 *  for (a failure is still an error). Latency: request to ready. */
export function packageBuilds(api: BenchContext, o: { headers: Record<string, string>; versionId: string; profileId: string; n: number }): Workload {
  const body = {
    embodimentProfileId: o.profileId,
    mode: 'remote_ws',
    remotePolicyHost: 'policy.internal',
    remotePolicyPort: 8000,
    steps: 5,
    useFakeTransport: true,
  }
  return {
    name: `edge package builds through the API (${o.n} loops)`,
    async run(seconds) {
      const t = new Tally()
      const deadline = performance.now() + seconds * 1000
      let inTime = 0
      await loops(o.n, seconds, async () => {
        const t0 = performance.now()
        const created = await request(t, `${api.url}/v1/model-versions/${o.versionId}/edge-inference-package`, { ...json(body, o.headers), expect: 201 })
        if (!created) return
        const give = performance.now() + 180_000
        for (;;) {
          await Bun.sleep(200)
          const got = await request(t, `${api.url}/v1/edge-inference-packages/${created.data.id}`, { headers: o.headers, expect: 200 })
          const status = got?.data?.status
          if (status === 'ready') {
            t.pass(performance.now() - t0)
            if (performance.now() <= deadline) inTime++
            return
          }
          if (status === 'failed') return t.fail('build failed', `${created.data.id}: ${got.data.failureReason}`)
          if (performance.now() > give) return t.fail('build not ready in 180 s', `${created.data.id} still ${status}`)
        }
      })
      return { ...t.outcome(seconds, 'builds/s'), rate: inTime / seconds }
    },
  }
}

/** (5) Webhook fan-out: API keys created by the tenant owner's session, each recorded in the audit trail and so
 *  published as an `audit.entry` event that every endpoint of the tenant (local HTTPS receivers) subscribes to. At
 *  most `window` events are outstanding (not yet at every endpoint), so the rate is the pipeline's. Latency: the
 *  creating request's answer to each delivery's arrival. After the deadline the rest is waited for (2 minutes): what
 *  never arrives, arrives twice, or does not verify with the endpoint's secret is an error. */
export function webhookFanOut(api: BenchContext, o: { session: Record<string, string>; receivers: Receiver[]; window: number }): Workload {
  const E = o.receivers.length
  // Per phase: the keys created (id → when their creation answered), and the deliveries of api_key.created entries
  // by the key's id, kept even when one arrives before the bench has read the creating answer.
  let created = new Map<string, number>()
  let arrived = new Map<string, number[]>()
  let seen = new Set<string>()
  let t = new Tally()
  let complete = 0
  o.receivers.forEach((r, receiver) => {
    const previous = r.answer
    r.answer = (d: Delivery) => {
      const data = d.body.data as { action?: string; target?: { id?: string } }
      const id = data.target?.id
      if (d.body.type === 'audit.entry' && data.action === 'api_key.created' && id) {
        if (d.verifiedBy.length === 0) t.fail('unverified signature', d.webhookId)
        const key = `${receiver}/${d.webhookId}`
        if (seen.has(key)) t.fail('duplicate delivery', key)
        else {
          seen.add(key)
          const list = [...(arrived.get(id) ?? []), d.at]
          arrived.set(id, list)
          if (list.length === E && created.has(id)) complete++
        }
      }
      return previous(d)
    }
  })
  const deliveredOfCreated = () => [...created.keys()].reduce((n, id) => n + (arrived.get(id)?.length ?? 0), 0)
  return {
    name: `webhook fan-out to ${E} HTTPS endpoints (audit.entry of API key creations, ${o.window} events outstanding at most)`,
    async run(seconds) {
      created = new Map()
      arrived = new Map()
      seen = new Set()
      t = new Tally()
      complete = 0
      let n = 0
      const deadline = performance.now() + seconds * 1000
      while (performance.now() < deadline) {
        if (created.size - complete >= o.window) {
          await Bun.sleep(5)
          continue
        }
        const res = await request(t, `${api.url}/v1/api-keys`, { ...json({ name: `fan-out ${++n}`, scopes: ['tenant:read'] }, o.session), expect: 201 })
        if (!res) continue
        created.set(res.data.apiKey.id, Date.now())
        if (arrived.get(res.data.apiKey.id)?.length === E) complete++
      }
      const inTime = deliveredOfCreated()
      const drainUntil = performance.now() + 120_000
      while (complete < created.size && performance.now() < drainUntil) await Bun.sleep(50)
      const delivered = deliveredOfCreated()
      const missing = created.size * E - delivered
      if (missing > 0) {
        t.errors['delivery missing after 2 minutes'] = missing
        t.example ||= `delivery missing: ${missing} of ${created.size * E}`
      }
      for (const [id, at] of created) for (const a of arrived.get(id) ?? []) t.latencies.push(a - at)
      return {
        ...t.outcome(seconds, 'deliveries/s'),
        rate: inTime / seconds,
        detail: `${created.size} events, ${delivered} deliveries, ${inTime} of them before the deadline`,
      }
    },
  }
}

/** (6) The console in Chromium: every page in turn, each in a fresh context (empty cache) loaded at its address,
 *  until interactive (its navigation link current, nothing loading). A response ≥ 500 the page received, a script
 *  error, or a page not interactive within 30 s is an error. */
export function consolePages(api: BenchContext, o: { session: Record<string, string>; browser: Browser }): Workload {
  return {
    name: 'console pages in Chromium, fresh context each, to interactive',
    async run(seconds) {
      const t = new Tally()
      const pages: Record<string, number[]> = Object.fromEntries(PAGES.map((p) => [p, []]))
      const deadline = performance.now() + seconds * 1000
      let i = 0
      // At least one pass over every page, however short the phase.
      while (performance.now() < deadline || i < PAGES.length) {
        const route = PAGES[i++ % PAGES.length]!
        const context = await signedContext(api, o)
        try {
          const page: Page = await context.newPage()
          page.on('response', (r) => {
            if (r.status() >= 500) t.fail('5xx seen by the page', `${route}: ${r.status()} ${r.url()}`)
          })
          page.on('pageerror', (e) => t.fail('script error', `${route}: ${e.message}`))
          const t0 = performance.now()
          await page.goto(`${api.url}/console#/${route}`)
          await untilInteractive(page, route)
          const ms = performance.now() - t0
          t.pass(ms)
          pages[route]!.push(ms)
        } catch (err) {
          t.fail('not interactive', `${route}: ${(err as Error).message.split('\n')[0]}`)
        } finally {
          await context.close()
        }
      }
      return t.outcome(seconds, 'pages/s', { pages })
    },
  }
}
