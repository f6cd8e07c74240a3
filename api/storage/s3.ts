// S3 access shared by the API (usage refresh, reachability), the activities (provisioning, reconciliation)
// and the benchmark. Plain functions over the minio client; nothing here knows about HTTP or Temporal.
import { Client as S3Client, type BucketItem } from 'minio'

type ListPage = Awaited<ReturnType<S3Client['listObjectsV2Query']>>
import { sha256Hex } from '../platform/crypto'
import type { Region } from './regions'
import { traceS3 } from './s3-tracing'

export const BUCKET_KINDS = ['general', 'dataset', 'export'] as const
export type BucketKind = (typeof BUCKET_KINDS)[number]

/** What each kind of bucket gets at creation. Exports are regenerable, so old ones expire. */
export const BUCKET_POLICY: Record<BucketKind, { versioning: boolean; expireDays: number | null }> = {
  general: { versioning: false, expireDays: null },
  dataset: { versioning: true, expireDays: null },
  export: { versioning: false, expireDays: 30 },
}

/** Bucket names share one global namespace per endpoint. A hash of the deployment prefix and the tenant id
 *  keeps tenants (and deployments sharing an endpoint) apart and reveals neither; 80 bits make a collision
 *  practically impossible. Lowercase hex and hyphens only: valid S3 names of 32 characters. */
export function bucketNameFor(deployment: string, tenantId: string, kind: BucketKind): string {
  return `rcp-${sha256Hex(`${deployment}/${tenantId}`).slice(0, 20)}-${kind}`
}

const clients = new Map<string, S3Client>()

/** One client per region and endpoint: the minio client keeps its own HTTP agent, so reuse it. */
export function s3For(region: Pick<Region, 'id' | 'endpoint' | 'accessKey' | 'secretKey'>): S3Client {
  const key = `${region.id} ${region.endpoint} ${region.accessKey}`
  let client = clients.get(key)
  if (!client) {
    const url = new URL(region.endpoint)
    const useSSL = url.protocol === 'https:'
    client = new S3Client({
      endPoint: url.hostname,
      port: Number(url.port || (useSSL ? 443 : 80)),
      useSSL,
      accessKey: region.accessKey,
      secretKey: region.secretKey,
      region: 'us-east-1',
      pathStyle: true,
    })
    traceS3(client)
    clients.set(key, client)
  }
  return client
}

/** Network-level failures (refused, reset, DNS, timeouts) as opposed to S3 answering with an error. */
export function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: string })?.code ?? ''
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'EPIPE', 'ConnectionRefused', 'ConnectionClosed'].includes(code) ||
    /ECONNREFUSED|socket connection was closed|Unable to connect|timed out/i.test(String((err as Error)?.message ?? ''))
  )
}

export const isNoSuchBucket = (err: unknown) => (err as { code?: string })?.code === 'NoSuchBucket'

/** The object is not there (a stat answers NotFound, a read NoSuchKey). */
export const isMissingObject = (err: unknown) => ['NotFound', 'NoSuchKey'].includes((err as { code?: string })?.code ?? '')

export interface Page {
  objects: { key: string; size: number }[]
  /** The last key of this page: where a resumed walk starts after. */
  lastKey: string | null
}

/** Lists a bucket in key order, one page at a time, starting after `startAfter`. The next page is requested
 *  while the caller handles the current one, so a consumer's own work (SQL) overlaps the listing. */
export async function* pages(s3: S3Client, bucket: string, opts: { startAfter?: string; pageSize: number }): AsyncGenerator<Page> {
  const fetchPage = (token: string): Promise<ListPage> => s3.listObjectsV2Query(bucket, '', token, '', opts.pageSize, token ? '' : (opts.startAfter ?? ''))
  let next: Promise<ListPage> | undefined = fetchPage('')
  while (next) {
    const res: ListPage = await next
    next = res.isTruncated ? fetchPage(res.nextContinuationToken) : undefined
    // Unhandled until awaited on the next turn; a consumer that stops early must not crash the process.
    next?.catch(() => {})
    const objects = res.objects.filter((o): o is BucketItem & { name: string } => typeof o.name === 'string').map((o) => ({ key: o.name, size: o.size }))
    yield { objects, lastKey: objects.at(-1)?.key ?? null }
  }
}

/** Object count and bytes of the current versions in a bucket. */
export async function measureBucket(s3: S3Client, bucket: string): Promise<{ objectCount: number; bytes: number }> {
  let objectCount = 0
  let bytes = 0
  for await (const page of pages(s3, bucket, { pageSize: 1000 })) {
    objectCount += page.objects.length
    for (const o of page.objects) bytes += o.size
  }
  return { objectCount, bytes }
}
