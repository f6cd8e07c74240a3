// The TypeScript SDK's list iterator: `bun bench/sdk-list.ts [--members 100000]` plus the harness's flags (6 paired
// rounds). Walks every membership of a tenant of --members members (seeded by SQL) at pageSize 100 through the SDK's
// items() (openapi-fetch, its middleware, the retrying fetch, the error check) and by a page loop written by hand over
// fetch, the two walks page beside page in every round, and reports members/s of each and their ratio (target: the
// SDK ≥ 90% of the hand loop). Results in bench/results/sdk-list.json.
import { createRcpClient, items } from '../clients/ts'
import { benchmark, type Sample } from './harness'
import { patIn, seedMembers } from './rows'

const HAND = 'hand-written page loop over fetch'
const PAGE = 100

await benchmark('sdk-list', { members: { type: 'string' } }, async (h) => {
  const members = Number(h.flags.members ?? 100_000)
  const api = await h.api((await h.postgres()).url)
  const { headers, tenantId } = await patIn(api, ['tenant:read', 'tenant:manage'])
  await seedMembers(api.databaseUrl, tenantId, members)
  const expected = members + 1 // and the owner
  const token = headers.authorization!.slice('Bearer '.length)

  type Page = { data: unknown[]; nextPageToken?: string }
  /** A walker takes one page a step and says how many members it took (0 once its walk has ended). */
  type Walker = () => Promise<number>
  const handOn = (base: string): Walker => {
    let pageToken: string | undefined
    let ended = false
    return async () => {
      if (ended) return 0
      const query = new URLSearchParams({ pageSize: String(PAGE), ...(pageToken ? { pageToken } : {}) })
      const res = await fetch(`${base}/v1/tenants/current/memberships?${query}`, { headers })
      if (!res.ok) throw new Error(`page answered ${res.status}: ${await res.text()}`)
      const page = (await res.json()) as Page
      pageToken = page.nextPageToken
      ended = !pageToken
      return page.data.length
    }
  }
  // The SDK's step takes a page's worth of items from one items() iterator: its first next() asks for the page, the
  // others are answered from it, as a caller's for-await over the whole list sees them.
  const sdkOn = (baseUrl: string): Walker => {
    const rcp = createRcpClient({ baseUrl, auth: { token } })
    const it = items(rcp, '/v1/tenants/current/memberships', { params: { query: { pageSize: PAGE } } })
    return async () => {
      let n = 0
      while (n < PAGE && !(await it.next()).done) n++
      return n
    }
  }

  // The same pages, recorded from the API and answered from memory by a server that does nothing else: the two walks
  // against it differ only by the client's own work per page, which the API's time per page hides above.
  const recorded = new Map<string, string>()
  let next: string | undefined
  do {
    const res = await fetch(
      `${api.url}/v1/tenants/current/memberships?${new URLSearchParams({ pageSize: String(PAGE), ...(next ? { pageToken: next } : {}) })}`,
      { headers },
    )
    const text = await res.text()
    recorded.set(next ?? '', text)
    next = (JSON.parse(text) as { nextPageToken?: string }).nextPageToken
  } while (next)
  const stub = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) => new Response(recorded.get(new URL(req.url).searchParams.get('pageToken') ?? ''), { headers: { 'content-type': 'application/json' } }),
  })
  h.own({ stop: async () => void stub.stop(true) })
  const stubUrl = `http://127.0.0.1:${stub.port}`
  const HAND_STUB = 'hand-written page loop, the same pages from memory'

  /** One walk of the whole list by each client, page beside page: a page of one, then the same page of the other
   *  (which goes first alternates page by page), each client timed over its own pages only. On this shared machine a
   *  walk is seconds, and the neighbours' load moves the time of a page two- or threefold within seconds: walks
   *  measured one after the other (the first design) read the neighbours as much as the clients, and put the SDK at
   *  59% to 137% of the hand loop in one run. Pages milliseconds apart see the same neighbours. */
  const interleaved = async (hand: Walker, sdk: Walker) => {
    const ms = { hand: [] as number[], sdk: [] as number[] }
    const counts = { hand: 0, sdk: 0 }
    const step = async (who: 'hand' | 'sdk', walker: Walker) => {
      const t = performance.now()
      const n = await walker()
      if (n > 0) ms[who].push(performance.now() - t)
      counts[who] += n
      return n
    }
    for (let page = 0; ; page++) {
      const [a, b] = page % 2 === 0 ? (['hand', 'sdk'] as const) : (['sdk', 'hand'] as const)
      const na = await step(a, a === 'hand' ? hand : sdk)
      const nb = await step(b, b === 'hand' ? hand : sdk)
      if (na === 0 && nb === 0) break
    }
    for (const who of ['hand', 'sdk'] as const) {
      if (counts[who] !== expected) throw new Error(`${who} walked ${counts[who]} members, expected ${expected}`)
    }
    const sample = (times: number[]) => {
      const total = times.reduce((x, y) => x + y, 0)
      const sorted = [...times].sort((x, y) => x - y)
      return { rate: expected / (total / 1000), p50Ms: sorted[Math.floor(sorted.length / 2)]!, note: `${times.length} pages, each beside the other's` }
    }
    return { hand: sample(ms.hand), sdk: sample(ms.sdk) }
  }
  /** The harness measures a pair's baseline and row one after the other; both read one interleaved walk of the
   *  round: whichever it asks first runs the walk, the other takes its half. */
  const paired = (walk: () => Promise<{ hand: Sample; sdk: Sample }>) => {
    let pending: { hand: Sample; sdk: Sample } | undefined
    const half = (who: 'hand' | 'sdk') => async () => {
      if (!pending) {
        pending = await walk()
        return pending[who]
      }
      const s = pending[who]
      pending = undefined
      return s
    }
    return { hand: half('hand'), sdk: half('sdk') }
  }
  const live = paired(() => interleaved(handOn(api.url), sdkOn(api.url)))
  const fromMemory = paired(() => interleaved(handOn(stubUrl), sdkOn(stubUrl)))

  // Warm the API's plans, the connection pool and both clients' code.
  await interleaved(handOn(api.url), sdkOn(api.url))
  return {
    baselines: [
      { name: HAND, run: live.hand },
      { name: HAND_STUB, run: fromMemory.hand },
    ],
    rows: [
      { name: "the SDK's items() iterator", run: live.sdk, target: 0.9, targetOf: HAND },
      { name: "the SDK's items(), the same pages from memory (its own cost)", run: fromMemory.sdk, targetOf: HAND_STUB },
    ],
    rounds: 6,
    paired: true,
  }
})
