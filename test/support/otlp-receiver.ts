// An OTLP/HTTP trace receiver in the test process: what a collector would get from the API and the worker when
// they export with OTEL_EXPORTER_OTLP_PROTOCOL=http/json. It keeps every request body as received (for secret
// scans) and every span flattened with its service, ids and attributes.

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number }
type KeyValue = { key: string; value: AnyValue }
type OtlpSpan = {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes?: KeyValue[]
  status?: { code?: number; message?: string }
}
type Export = { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[] }

export interface ReceivedSpan {
  service: string
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  attributes: Record<string, string | number | boolean>
  status?: { code?: number; message?: string }
}

const plainValue = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''))
const attributesOf = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, plainValue(kv.value)]))

export function startOtlpReceiver() {
  const bodies: string[] = []
  const spans: ReceivedSpan[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      if (req.method !== 'POST' || new URL(req.url).pathname !== '/v1/traces') return new Response('not found', { status: 404 })
      const text = await req.text()
      bodies.push(text)
      const body = JSON.parse(text) as Export
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '')
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? []) {
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              attributes: attributesOf(s.attributes),
              status: s.status,
            })
          }
      }
      return Response.json({})
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    bodies,
    spans,
    stop: () => server.stop(true),
  }
}

/** The chain of spans from `span` up to its trace's root, `span` first. */
export function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.filter((s) => s.traceId === span.traceId).map((s) => [s.spanId, s]))
  const chain = [span]
  for (let at = byId.get(span.parentSpanId); at && chain.length < 100; at = byId.get(at.parentSpanId)) chain.push(at)
  return chain
}
