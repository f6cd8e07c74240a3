// OpenTelemetry traces (docs/operations.md "Traces"). Started only when the standard OTLP endpoint variables are set; otherwise
// nothing is registered, the API's global tracer stays the no-op one, and every traced call site sees `tracer()`
// answer undefined and calls straight through (one module-variable read, no span, no context).
import { createRequire } from 'node:module'
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api'
import type { Resource } from '@opentelemetry/resources'
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { Logger } from './log'
import { RequestContextManager } from './trace-context'

export const TRACER_NAME = 'rcp'

// The SDK is loaded only by a process that traces: one that does not never imports it (only the small API package).
const require = createRequire(import.meta.url)
type Sdk = typeof import('@opentelemetry/sdk-trace-base') &
  typeof import('@opentelemetry/resources') & {
    W3CTraceContextPropagator: typeof import('@opentelemetry/core').W3CTraceContextPropagator
    ATTR_SERVICE_NAME: typeof import('@opentelemetry/semantic-conventions').ATTR_SERVICE_NAME
  }
const loadSdk = (): Sdk => ({
  ...require('@opentelemetry/sdk-trace-base'),
  ...require('@opentelemetry/resources'),
  W3CTraceContextPropagator: require('@opentelemetry/core').W3CTraceContextPropagator,
  ATTR_SERVICE_NAME: require('@opentelemetry/semantic-conventions').ATTR_SERVICE_NAME,
})

/** The export queue's bound and how long one export may take; a full queue drops spans, never blocks. */
const DEFAULT_MAX_QUEUE = 2048
const DEFAULT_EXPORT_TIMEOUT_MS = 10_000

type Env = Record<string, string | undefined>

/** True when the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingRequested(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  if (env.OTEL_TRACES_EXPORTER !== undefined && env.OTEL_TRACES_EXPORTER.trim().toLowerCase() === 'none') return false
  return !!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim())
}

export interface Tracing {
  tracer: Tracer
  resource: Resource
  /** Makes `ctx` the active context for the rest of the running task and all it awaits (a request's span, entered
   *  from the API's onRequest hook: api/http/request-span.ts). */
  enter(ctx: Context): void
  /** The processor the Temporal workflow sink feeds too: workflow spans leave the process on the same queue. */
  processor: SpanProcessor
  /** Exports what is queued (bounded by the export timeout) and stops. */
  shutdown(): Promise<void>
}

let active: Tracing | undefined

/** The process's tracer while tracing is on, else undefined: call sites test it and skip all tracing work. */
export const tracer = (): Tracer | undefined => active?.tracer
export const tracing = (): Tracing | undefined => active

function exporterFor(env: Env) {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim()
  type Exporters = typeof import('@opentelemetry/exporter-trace-otlp-proto')
  if (protocol === 'http/protobuf') return new (require('@opentelemetry/exporter-trace-otlp-proto') as Exporters).OTLPTraceExporter()
  if (protocol === 'http/json') return new (require('@opentelemetry/exporter-trace-otlp-http') as Exporters).OTLPTraceExporter()
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json`)
}

/** Starts the SDK when the environment asks for it (once a process); `service` names the process unless
 *  OTEL_SERVICE_NAME does. The exporter, the sampler (OTEL_TRACES_SAMPLER) and the queue (OTEL_BSP_*) read
 *  their standard variables; the queue is bounded and exports in the background, so a collector that is down or
 *  never answers costs spans, never a request's time. */
export function startTracing(service: string, log: Logger, env: Env = process.env): Tracing | undefined {
  if (active || !tracingRequested(env)) return active
  // The SDK reports export failures through diag; one warning per failure is enough, and it must not go to stdout
  // raw (the logs are JSON lines).
  diag.setLogger(
    {
      error: (message) => log.warn('trace export', { detail: message }),
      warn: (message) => log.warn('trace export', { detail: message }),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  )
  const { Resource, envDetectorSync, BatchSpanProcessor, BasicTracerProvider, W3CTraceContextPropagator, ATTR_SERVICE_NAME } = loadSdk()
  const resource = Resource.default()
    .merge(new Resource({ [ATTR_SERVICE_NAME]: service }))
    .merge(envDetectorSync.detect())
  const processor = new BatchSpanProcessor(exporterFor(env), {
    maxQueueSize: env.OTEL_BSP_MAX_QUEUE_SIZE ? Number(env.OTEL_BSP_MAX_QUEUE_SIZE) : DEFAULT_MAX_QUEUE,
    exportTimeoutMillis: env.OTEL_BSP_EXPORT_TIMEOUT ? Number(env.OTEL_BSP_EXPORT_TIMEOUT) : DEFAULT_EXPORT_TIMEOUT_MS,
  })
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] })
  const contexts = new RequestContextManager()
  provider.register({ contextManager: contexts, propagator: new W3CTraceContextPropagator() })
  const t = provider.getTracer(TRACER_NAME)
  active = {
    tracer: t,
    enter: (ctx) => contexts.enter(ctx),
    resource,
    processor,
    async shutdown() {
      active = undefined
      await provider.shutdown().catch((err) => log.warn('trace export on shutdown failed', { err }))
      trace.disable()
      context.disable()
      propagation.disable()
    },
  }
  log.info('traces on', { service: resource.attributes['service.name'], sampler: env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on' })
  return active
}

/** Runs `fn` in a child span of the active one, ending it when `fn` settles. Without tracing, or outside any span
 *  (a background loop), it is `fn()` itself: a poll every second must not make a root trace each time. `fail`
 *  names an error for the span's status; by default only the error's name, never its message (which may quote a
 *  value). */
export function inSpan<T>(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  fn: (span?: Span) => Promise<T>,
  fail: (err: unknown) => string = errorName,
): Promise<T> {
  const t = active?.tracer
  if (!t || !trace.getSpan(context.active())) return fn()
  return t.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span)
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: fail(err) })
      throw err
    } finally {
      span.end()
    }
  })
}

export const errorName = (err: unknown): string => (err instanceof Error ? err.name : typeof err)

export { SpanKind }
