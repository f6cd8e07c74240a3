import { createRequire } from 'node:module'
import { Client, Connection, isGrpcServiceError, NamespaceNotFoundError, ServiceError, type ClientOptions } from '@temporalio/client'
import type { Config } from './config'
import { tracer } from './tracing'

const require = createRequire(import.meta.url)

/** In a traced process a workflow start is a span whose context travels in the workflow's headers, so the run, its
 *  activities and their calls join the caller's trace (docs/operations.md "Traces"); otherwise no interceptor at all. */
export function clientInterceptors(): ClientOptions['interceptors'] {
  const t = tracer()
  if (!t) return undefined
  const { OpenTelemetryWorkflowClientInterceptor } =
    require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry')
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: t })] }
}

/** The process's one Temporal client, shared by every domain that starts workflows (mail, storage). Built on its own
 *  connection it connects on first use, so a process that never starts a workflow never connects, and a failed
 *  attempt is forgotten, so a process started while Temporal was down recovers once it is back (a lazy Connection
 *  would keep the failure). Built on a client the process already holds (the worker's, on the connection its
 *  workers poll with), it is that client, and the process closes that connection itself. */
export class TemporalClient {
  private pending: Promise<{ connection?: Connection; client: Client }> | undefined

  constructor(
    private config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>,
    held?: Client,
  ) {
    if (held) this.pending = Promise.resolve({ client: held })
  }

  async get(): Promise<Client> {
    this.pending ??= Connection.connect({ address: this.config.TEMPORAL_ADDRESS }).then(
      (connection) => ({ connection, client: new Client({ connection, namespace: this.config.TEMPORAL_NAMESPACE, interceptors: clientInterceptors() }) }),
      (err) => {
        this.pending = undefined
        // The SDK's failed connect is a plain Error ("Failed to connect before the deadline"): name it.
        throw new TemporalUnavailableError(`Temporal at ${this.config.TEMPORAL_ADDRESS} cannot be reached`, { cause: err })
      },
    )
    return (await this.pending).client
  }

  /** Closes the connection it opened; a held client's stays open, and the client stays in use. */
  async close(): Promise<void> {
    const pending = this.pending
    if (!pending) return
    const { connection } = await pending.catch(() => ({ connection: undefined }))
    if (!connection) return
    this.pending = undefined
    await connection.close()
  }
}

export class TemporalUnavailableError extends Error {
  override name = 'TemporalUnavailableError'
}

// gRPC status codes of a server that is away, overloaded or too slow to answer: UNAVAILABLE, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED.
const UNAVAILABLE_GRPC_CODES = new Set([14, 4, 8])

/** Temporal could not take the call now, and the same call may succeed shortly. A starved or starting server also
 *  answers NamespaceNotFound while its namespace registry is not loaded (seen in the mixed-load bench); a namespace
 *  that really is missing is a deployment error the worker's start reports by name. */
export function isTemporalUnavailable(err: unknown): boolean {
  if (err instanceof TemporalUnavailableError || err instanceof NamespaceNotFoundError) return true
  const cause = err instanceof ServiceError ? err.cause : err
  return isGrpcServiceError(cause) && UNAVAILABLE_GRPC_CODES.has(cause.code)
}
