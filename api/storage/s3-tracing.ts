// S3 spans (docs/operations.md "Traces"). minio has no OpenTelemetry instrumentation; every operation of its client (put, get,
// stat, multipart, list) goes through one request method, which a traced process wraps on each client it makes.
// The span names the HTTP method and records the bucket and the object key; never the query (an upload id, a
// presigned signature), a header (the request's signature) or a body.
import type { Client as S3Client } from 'minio'
import { inSpan, SpanKind, tracer } from '../platform/tracing'

type RequestOptions = { method?: string; bucketName?: string; objectName?: string }
type StreamRequest = (options: RequestOptions, ...rest: unknown[]) => Promise<unknown>
/** minio 8's one request path (internal, pinned with the package): makeRequestAsync and every operation reach it. */
type WithRequest = { makeRequestStreamAsync: StreamRequest }

export function traceS3(client: S3Client): S3Client {
  if (!tracer()) return client
  const target = client as unknown as WithRequest
  const original = target.makeRequestStreamAsync
  if (typeof original !== 'function') throw new Error('minio client has no makeRequestStreamAsync: S3 tracing needs updating for this minio version')
  target.makeRequestStreamAsync = function traced(this: unknown, options: RequestOptions, ...rest: unknown[]) {
    const method = options.method ?? 'GET'
    return inSpan(
      `S3 ${method}`,
      SpanKind.CLIENT,
      {
        'rpc.system': 'aws-api',
        'rpc.service': 'S3',
        'http.request.method': method,
        ...(options.bucketName ? { 'aws.s3.bucket': options.bucketName } : {}),
        ...(options.objectName ? { 'aws.s3.key': options.objectName } : {}),
      },
      () => original.call(this, options, ...rest),
      (err) => String((err as { code?: unknown })?.code ?? (err as Error)?.name ?? 'error'),
    )
  }
  return client
}
