// The worker's half of traces (docs/operations.md "Traces"): Temporal's OpenTelemetry interceptors continue the trace a
// workflow start carried in its headers. The workflow interceptors run in the sandbox and hand their spans out
// through a sink to the process's span processor (the same bounded queue as every other span); the activity
// interceptor runs each activity inside its span, so the activity's SQL, S3, SMTP and HTTP spans are its children.
import { createRequire } from 'node:module'
import type { WorkerOptions } from '@temporalio/worker'
import { tracing, type Tracing } from '../api/platform/tracing'

// Loaded only by a worker that traces.
const require = createRequire(import.meta.url)
type Interceptors = typeof import('@temporalio/interceptors-opentelemetry')

/** The workflow interceptor module to bundle, in a traced process only. */
export function workflowTracingModules(): string[] {
  return tracing() ? [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')] : []
}

/** What Worker.create adds in a traced process: the interceptors and the span sink; nothing otherwise. */
export function tracedWorkerOptions(t: Tracing | undefined): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!t) return {}
  const { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } =
    require('@temporalio/interceptors-opentelemetry') as Interceptors
  const options = { tracer: t.tracer }
  return {
    interceptors: {
      workflowModules: workflowTracingModules(),
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, options),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(t.processor, t.resource) },
  }
}
