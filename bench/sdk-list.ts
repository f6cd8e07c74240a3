// The TypeScript SDK's list iterator: `bun bench/sdk-list.ts [--members 100000]` plus the harness's flags (6 paired
// rounds). Walks every membership of a tenant of --members members (seeded by SQL) at pageSize 100, once
// through the SDK's items() (openapi-fetch, its middleware, the retrying fetch, the error check) and once by a page
// loop written by hand over fetch, each walk measured beside the other in every round, and reports members/s of each
// and their ratio (target: the SDK ≥ 90% of the hand loop). Results in bench/results/sdk-list.json.
import { createRcpClient, items } from '../clients/ts'
import { benchmark } from './harness'
import { patIn, seedMembers } from './rows'

const HAND = 'hand-written page loop over fetch'
const PAGE = 100
const WALKS = 2

await benchmark('sdk-list', { members: { type: 'string' } }, async (h) => {
  const members = Number(h.flags.members ?? 100_000)
  const api = await h.api((await h.postgres()).url)
  const { headers, tenantId } = await patIn(api, ['tenant:read', 'tenant:manage'])
  await seedMembers(api.databaseUrl, tenantId, members)
  const expected = members + 1 // and the owner
  const token = headers.authorization!.slice('Bearer '.length)

  const hand = async (base = api.url) => {
    let n = 0
    let pageToken: string | undefined
    do {
      const query = new URLSearchParams({ pageSize: String(PAGE), ...(pageToken ? { pageToken } : {}) })
      const res = await fetch(`${base}/v1/tenants/current/memberships?${query}`, { headers })
      if (!res.ok) throw new Error(`page answered ${res.status}: ${await res.text()}`)
      const page = (await res.json()) as { data: unknown[]; nextPageToken?: string }
      n += page.data.length
      pageToken = page.nextPageToken
    } while (pageToken)
    return n
  }
  const sdkOn = (baseUrl: string) => {
    const rcp = createRcpClient({ baseUrl, auth: { token } })
    return async () => {
      let n = 0
      for await (const _ of items(rcp, '/v1/tenants/current/memberships', { params: { query: { pageSize: PAGE } } })) n++
      return n
    }
  }
  const sdk = sdkOn(api.url)

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

  /** Members per second of WALKS whole walks, each seeing every member. A walk of 100,000 members is seconds of
   *  requests, so the pairs of a round (one of each, side by side) compare the two under the same neighbours. */
  const rate = async (walk: () => Promise<number>) => {
    const times: number[] = []
    for (let i = 0; i < WALKS; i++) {
      const t = performance.now()
      const n = await walk()
      if (n !== expected) throw new Error(`walked ${n} members, expected ${expected}`)
      times.push(performance.now() - t)
    }
    const total = times.reduce((a, b) => a + b, 0)
    times.sort((a, b) => a - b)
    return {
      rate: (expected * times.length) / (total / 1000),
      p50Ms: times[Math.floor(times.length / 2)]!,
      note: `${times.length} walk(s) of ${Math.ceil(expected / PAGE)} pages`,
    }
  }
  // Warm the API's plans, the connection pool and both clients' code.
  await hand()
  await sdk()
  return {
    baselines: [
      { name: HAND, run: () => rate(hand) },
      { name: HAND_STUB, run: () => rate(() => hand(stubUrl)) },
    ],
    rows: [
      { name: "the SDK's items() iterator", run: () => rate(sdk), target: 0.9, targetOf: HAND },
      { name: "the SDK's items(), the same pages from memory (its own cost)", run: () => rate(sdkOn(stubUrl)), targetOf: HAND_STUB },
    ],
    rounds: 6,
    paired: true,
  }
})
