// OpenTelemetry traces (README "Traces"). Started only when the standard OTLP endpoint variables are set; otherwise
// nothing is registered, the API's global tracer stays the no-op one, and every traced call site sees `tracer()`
// answer undefined and calls straight through (one module-variable read, no span, no context).
import { context, diag, DiagLogLevel, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { envDetectorSync, Resource } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import type { Logger } from './log'

export const TRACER_NAME = 'rcp'

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
  if (protocol === 'http/protobuf') return new ProtobufExporter()
  if (protocol === 'http/json') return new JsonExporter()
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
  diag.setLogger({
    error: (message) => log.warn('trace export', { detail: message }),
    warn: (message) => log.warn('trace export', { detail: message }),
    info: () => {}, debug: () => {}, verbose: () => {},
  }, DiagLogLevel.WARN)
  const resource = Resource.default().merge(new Resource({ [ATTR_SERVICE_NAME]: service })).merge(envDetectorSync.detect())
  const processor = new BatchSpanProcessor(exporterFor(env), {
    maxQueueSize: env.OTEL_BSP_MAX_QUEUE_SIZE ? Number(env.OTEL_BSP_MAX_QUEUE_SIZE) : DEFAULT_MAX_QUEUE,
    exportTimeoutMillis: env.OTEL_BSP_EXPORT_TIMEOUT ? Number(env.OTEL_BSP_EXPORT_TIMEOUT) : DEFAULT_EXPORT_TIMEOUT_MS,
  })
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] })
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable(), propagator: new W3CTraceContextPropagator() })
  const t = provider.getTracer(TRACER_NAME)
  active = {
    tracer: t, resource, processor,
    async shutdown() {
      active = undefined
      await provider.shutdown().catch((err) => log.warn('trace export on shutdown failed', { err }))
      trace.disable()
      context.disable()
      propagation.disable()
    },
  }
  log.info('traces on', { service: resource.attributes[ATTR_SERVICE_NAME], sampler: env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on' })
  return active
}

/** Runs `fn` in a child span of the active one, ending it when `fn` settles. Without tracing, or outside any span
 *  (a background loop), it is `fn()` itself: a poll every second must not make a root trace each time. `fail`
 *  names an error for the span's status; by default only the error's name, never its message (which may quote a
 *  value). */
export function inSpan<T>(name: string, kind: SpanKind, attributes: Attributes, fn: (span?: Span) => Promise<T>, fail: (err: unknown) => string = errorName): Promise<T> {
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
