// Shared by the edge-package tests: a tenant with ready storage and a model:* PAT, a profile, a ready model version
// whose objects are really in MinIO, and waits on a package's status.
import { createHash, randomBytes } from 'node:crypto'
import type { Client as S3Client } from 'minio'
import type { Sql } from '../../api/platform/db'
import type { Client } from '../support/client'
import { eventually } from '../support/temporal'
import { localS3 } from '../storage/helpers'
import { modelTenant as modelsTenant } from '../models/support'

export const FEATURES = {
  observationFeatures: [{ name: 'observation/state', dtype: 'float32', shape: [7], kind: 'state' }],
  actionFeatures: [{ name: 'actions', dtype: 'float32', shape: [10, 7], kind: 'action' }],
}

/** The model tests' tenant (ready storage, a model:read + model:write PAT) with its export bucket named. */
export async function modelTenant(base: string) {
  const t = await modelsTenant(base)
  return { ...t, models: t.pat, exportBucket: t.buckets.exportBucket!.name }
}

export async function makeProfile(sql: Sql, tenantId: string, name = `arm-${randomBytes(4).toString('hex')}`): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into embodiment_profiles (tenant_id, name, robot_type, control_rate_hz, observation_features, action_features)
    values (${tenantId}, ${name}, 'so100', 30, ${sql.json(FEATURES.observationFeatures as never)}, ${sql.json(FEATURES.actionFeatures as never)})
    returning id`
  return row!.id
}

/** Objects uploaded to the tenant's general bucket and a model version that validation would have made ready;
 *  `region` for a tenant whose storage is not in the runner's local MinIO. */
export async function makeVersion(
  sql: Sql,
  tenantId: string,
  bucket: string,
  files: Record<string, Buffer | number>,
  status = 'ready',
  kind: 'model_bundle' | 'imported_checkpoint' = 'model_bundle',
  region: { id: string; s3: S3Client } = { id: 'local', s3: localS3() },
) {
  const s3 = region.s3
  const prefix = `checkpoints/${randomBytes(4).toString('hex')}/`
  const objects: { key: string; sizeBytes: number; sha256: string | null }[] = []
  for (const [name, body] of Object.entries(files)) {
    const key = prefix + name
    if (typeof body === 'number') {
      // Large objects: a deterministic stream, never a buffer of that size in the test either.
      const hash = createHash('sha256')
      // 1 MiB of hash output repeated: gzip's 32 KiB window never sees the repeat, so it compresses like weights.
      const chunk = Buffer.concat(Array.from({ length: 32768 }, (_, i) => createHash('sha256').update(`${body}/${i}`).digest()))
      const { Readable } = await import('node:stream')
      const parts = Math.ceil(body / chunk.length)
      const stream = Readable.from(
        (function* () {
          for (let i = 0; i < parts; i++) {
            const c = i === parts - 1 ? chunk.subarray(0, body - i * chunk.length) : chunk
            hash.update(c)
            yield c
          }
        })(),
      )
      await s3.putObject(bucket, key, stream, body)
      objects.push({ key, sizeBytes: body, sha256: hash.digest('hex') })
    } else {
      await s3.putObject(bucket, key, body, body.length)
      objects.push({ key, sizeBytes: body.length, sha256: createHash('sha256').update(body).digest('hex') })
    }
  }
  const [row] = await sql<{ id: string }[]>`
    insert into model_versions (tenant_id, name, format, status, failure_reason, source_kind, source, objects, region_id, bucket, total_bytes)
    values (${tenantId}, ${`v-${randomBytes(3).toString('hex')}`}, 'onnx', ${status}, ${status === 'failed' ? 'bad' : null}, ${kind},
            ${sql.json(kind === 'model_bundle' ? { kind, prefix, objects: Object.keys(files).map((key) => ({ key })) } : { kind, path: objects[0]!.key })},
            ${sql.json(objects as never)}, ${region.id}, ${bucket},
            ${objects.reduce((n, o) => n + o.sizeBytes, 0)})
    returning id`
  return { id: row!.id, objects }
}

export async function packageIn(client: Client, id: string, statuses: string[], timeoutMs = 60_000) {
  return eventually(
    `package ${id} to be ${statuses.join('|')}`,
    async () => {
      const res = await client.get(`/edge-inference-packages/${id}`)
      return statuses.includes(res.json?.data?.status) ? res.json.data : undefined
    },
    timeoutMs,
  )
}

/** A ready package of the tenant's own, seeded by SQL (building one takes minutes), whose runs a robot then reports. */
export async function seededPackage(sql: Sql, tenantId: string): Promise<string> {
  const profile = await makeProfile(sql, tenantId)
  const [version] = await sql<{ id: string }[]>`
    insert into model_versions (tenant_id, name, format, status, source_kind, source, objects)
    values (${tenantId}, 'deployed', 'onnx', 'ready', 'imported_checkpoint', '{"path":"m.onnx"}', '[]') returning id`
  const [pkg] = await sql<{ id: string }[]>`
    insert into edge_packages (tenant_id, model_version_id, embodiment_profile_id, mode, steps, target_arch, wire_protocols, use_fake_transport, workflow_id)
    values (${tenantId}, ${version!.id}, ${profile}, 'local', 1, 'cpu', '{openpi-ws}', true, ${`wf-${crypto.randomUUID()}`}) returning id`
  return pkg!.id
}

/** A robot's report of a completed run that finished just now. */
export const completedRunReport = () => ({
  stepsDone: 10,
  latencyMs: { p50: 1, p99: 2 },
  contractViolations: 0,
  exitReason: 'completed',
  violations: [],
  startedAt: new Date(Date.now() - 60_000).toISOString(),
  finishedAt: new Date().toISOString(),
})
