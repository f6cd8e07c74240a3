// What traces cost the hot path: `bun bench/traces.ts` plus the harness's flags. The same build three times against
// one Postgres, each in its own process, driven alternately: no OTLP variables (tracing off, nothing registered), and
// exporting OTLP/HTTP JSON to a receiver in this process that answers at once, and to one that accepts connections
// and never answers (the exporter's queue fills and drops). GET /v1/tokens/self with traces off is the baseline.
// Results in bench/results/traces.json.
import { createServer, type Socket } from 'node:net'
import { benchmark } from './harness'
import { rows } from './rows'

const tokens = rows.find((r) => r.path === '/v1/tokens/self')!
const OFF = 'GET /v1/tokens/self (PAT), traces off'

const receiver = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: async (req) => {
    await req.arrayBuffer()
    return Response.json({})
  },
})
const held: Socket[] = []
const blackHole = createServer((socket) => void held.push(socket))
await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve))
const holePort = (blackHole.address() as { port: number }).port
// Both listeners live as long as the process, which the harness ends after its teardown.

await benchmark('traces', {}, async (h) => {
  const pg = await h.postgres()
  const off = await h.api(pg.url, { env: {} })
  const on = await h.api(pg.url, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } })
  const hole = await h.api(pg.url, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${holePort}` } })
  return {
    baselines: [h.http(off, { ...tokens, name: OFF, target: undefined, maxP99Ms: undefined })],
    rows: [
      h.http(on, { ...tokens, name: 'GET /v1/tokens/self (PAT), traces exported', target: 0.8, targetOf: OFF, maxP99Ms: undefined }),
      h.http(hole, { ...tokens, name: 'GET /v1/tokens/self (PAT), collector never answers', target: 0.8, targetOf: OFF, maxP99Ms: undefined }),
    ],
    rounds: 3,
  }
})
