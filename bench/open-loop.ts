// An open-loop request driver in a process of its own, for bench/mixed-load.ts: `bun bench/open-loop.ts` with
// RCP_OPEN_LOOP='{"url","headers","rate","seconds","timeoutMs","expect"}'. Requests are sent on a fixed schedule
// (request i at start + i/rate) whether or not earlier ones have answered, and each latency is counted from its
// scheduled time, so a server that stalls shows the stall in every request that waited behind it (no coordinated
// omission). Its own process keeps the timings apart from the bench process's work (receivers, Chromium, loops).
// Prints one JSON line: counts by outcome, the latency quantiles, and the p99 of each minute (of each `windowSeconds`
// when given). `warmupSeconds` of requests before the schedule are sent and not counted; it prints `warm` when they
// are done. SIGTERM ends the schedule early (bench/tenant-deletion.ts loads for as long as a deletion runs): the
// requests in flight are awaited and the figures cover the time it ran.
export {}

const o: {
  url: string
  headers: Record<string, string>
  rate: number
  seconds: number
  timeoutMs: number
  expect: number
  windowSeconds?: number
  warmupSeconds?: number
} = JSON.parse(process.env.RCP_OPEN_LOOP!)
let stopped = false
process.on('SIGTERM', () => {
  stopped = true
})
const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0)

const latencies: { at: number; ms: number }[] = []
const outcomes: Record<string, number> = {}
let example = ''
const count = (what: string, detail = '') => {
  outcomes[what] = (outcomes[what] ?? 0) + 1
  if (what !== 'ok') example ||= `${what} ${detail}`.trim()
}

async function send(scheduled: number, counted: boolean) {
  try {
    const res = await fetch(o.url, { headers: o.headers, signal: AbortSignal.timeout(o.timeoutMs) })
    const body = await res.text()
    if (!counted) return
    latencies.push({ at: scheduled, ms: performance.now() - scheduled })
    if (res.status === o.expect) count('ok')
    else count(res.status >= 500 ? '5xx' : 'unexpected status', `${res.status} ${body.slice(0, 200)}`)
  } catch (err) {
    const name = (err as Error).name
    count(name === 'TimeoutError' ? 'timeout' : 'socket error', (err as Error).message)
  }
}

// The first `warmupSeconds` of requests open the connections and warm the process; they are sent but not counted.
const warmup = o.warmupSeconds ?? 0
await (async () => {
  const until = performance.now() + warmup * 1000
  while (performance.now() < until) {
    void send(0, false)
    await Bun.sleep(1000 / o.rate)
  }
})()
console.log('warm')
const start = performance.now()
let total = Math.floor(o.rate * o.seconds)
const inFlight: Promise<void>[] = []
for (let i = 0; i < total; ) {
  const now = performance.now()
  for (; i < total && start + (i * 1000) / o.rate <= now; i++) inFlight.push(send(start + (i * 1000) / o.rate, true))
  if (stopped) total = i
  if (i < total) await Bun.sleep(Math.max(0, Math.min(50, start + (i * 1000) / o.rate - performance.now())))
}
const ranSeconds = stopped ? (performance.now() - start) / 1000 : o.seconds
await Promise.all(inFlight)

const sorted = latencies.map((l) => l.ms).sort((a, b) => a - b)
const windowP99 = (seconds: number) =>
  Array.from({ length: Math.ceil(ranSeconds / seconds) }, (_, m) => {
    const of = latencies
      .filter((l) => l.at - start >= m * seconds * 1000 && l.at - start < (m + 1) * seconds * 1000)
      .map((l) => l.ms)
      .sort((a, b) => a - b)
    return quantile(of, 0.99)
  })
const perMinuteP99 = windowP99(60)
console.log(
  JSON.stringify({
    sent: total,
    seconds: ranSeconds,
    outcomes,
    example,
    p50Ms: quantile(sorted, 0.5),
    p90Ms: quantile(sorted, 0.9),
    p99Ms: quantile(sorted, 0.99),
    p999Ms: quantile(sorted, 0.999),
    maxMs: sorted.at(-1) ?? 0,
    perMinuteP99,
    ...(o.windowSeconds ? { perWindowP99: windowP99(o.windowSeconds) } : {}),
  }),
)
