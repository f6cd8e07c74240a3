// Model version validation: every object read once, as a stream, to measure its size and SHA-256 (an object is
// never held whole, so a checkpoint of any size validates in constant memory), then the outcome recorded with its
// event. Measured objects go into the heartbeat, so an attempt retried after a worker died skips them.
import { createHash } from 'node:crypto'
import { ApplicationFailure, Context } from '@temporalio/activity'
import type { Client as S3Client } from 'minio'
import { findModelVersion } from '../api/model-versions/queries'
import { recordValidationOutcome } from '../api/model-versions/service'
import {
  ModelsErrorType,
  type MeasuredObject,
  type ValidateModelVersionInput,
  type ValidationCheckpoint,
  type ValidationOutcome,
} from '../workflows/contract-models'
import type { ActivityDeps } from './deps'
import { s3ForRegion } from './storage-provision'
import { isMissingObject } from '../api/storage/s3'
import { garbageCollector } from './streamed-garbage'

const HEARTBEAT_EVERY_MS = 1000

/** process.cpuUsage's microseconds (user + system) as whole milliseconds, rounded up: work that ran is never 0. */
export const cpuMillis = (u: NodeJS.CpuUsage): number => Math.ceil((u.user + u.system) / 1000)

/** Size and SHA-256 of one object, chunk by chunk; null when it does not exist. (bench/edge-package.ts measures its
 *  memory on checkpoints of real size.) */
export async function measureObject(s3: S3Client, bucket: string, key: string, beat: () => void): Promise<MeasuredObject | null> {
  let stream: AsyncIterable<Buffer>
  try {
    stream = await s3.getObject(bucket, key)
  } catch (err) {
    if (isMissingObject(err)) return null
    throw err
  }
  const hash = createHash('sha256')
  let sizeBytes = 0
  let lastBeat = Date.now()
  const collect = garbageCollector()
  for await (const chunk of stream) {
    hash.update(chunk)
    sizeBytes += chunk.length
    collect(chunk.length)
    if (Date.now() - lastBeat >= HEARTBEAT_EVERY_MS) {
      beat()
      lastBeat = Date.now()
    }
  }
  return { key, sizeBytes, sha256: hash.digest('hex') }
}

/** The first difference from what the caller declared, naming the object; null when it matches. */
function mismatch(declared: { key: string; sizeBytes: number | null; sha256: string | null }, got: MeasuredObject | null): string | null {
  if (!got) return `object "${declared.key}" is missing`
  if (declared.sizeBytes !== null && got.sizeBytes !== declared.sizeBytes)
    return `object "${declared.key}" is ${got.sizeBytes} bytes; ${declared.sizeBytes} were declared`
  if (declared.sha256 !== null && got.sha256 !== declared.sha256) return `object "${declared.key}" has SHA-256 ${got.sha256}; ${declared.sha256} was declared`
  return null
}

export function modelValidationActivities(deps: ActivityDeps) {
  const { sql, log } = deps
  return {
    async measureModelVersionObjects(input: ValidateModelVersionInput): Promise<ValidationOutcome> {
      const row = await findModelVersion(sql, input.tenantId, input.modelVersionId)
      if (row?.status !== 'validating' || !row.bucket || !row.region_id) {
        throw ApplicationFailure.create({
          type: ModelsErrorType.versionNotValidating,
          message: 'The model version is gone or no longer validating',
          nonRetryable: true,
        })
      }
      const ctx = Context.current()
      const checkpoint = ctx.info.heartbeatDetails as ValidationCheckpoint | undefined
      const measured = [...(checkpoint?.measured ?? [])]
      if (measured.length > 0)
        log.info('model version validation resumes', { tenantId: input.tenantId, modelVersionId: row.id, measured: measured.length, of: row.objects.length })
      // The process's CPU time over the reads and hashes (user + system): other work the worker runs at the same
      // time is included, so it bounds this activity's use from above. Earlier attempts' use comes with the heartbeat.
      const cpuStart = process.cpuUsage()
      const cpuMs = () => (checkpoint?.cpuMs ?? 0) + cpuMillis(process.cpuUsage(cpuStart))
      const beat = () => ctx.heartbeat({ measured, cpuMs: cpuMs() } satisfies ValidationCheckpoint)
      const s3 = s3ForRegion(deps, row.region_id)
      for (const declared of row.objects.slice(measured.length)) {
        const got = await measureObject(s3, row.bucket, declared.key, beat)
        const reason = mismatch(declared, got)
        if (reason) return { status: 'failed', reason, cpuMs: cpuMs() }
        measured.push(got!)
        beat()
      }
      return { status: 'ready', objects: measured, cpuMs: cpuMs() }
    },

    async recordModelVersionValidation(input: ValidateModelVersionInput, outcome: ValidationOutcome): Promise<void> {
      const run = Context.current().info.workflowExecution?.runId
      if (!run) throw new Error('a metered activity runs outside a workflow')
      const status = await recordValidationOutcome(sql, input.tenantId, input.modelVersionId, outcome, run)
      log.info('model version validated', { tenantId: input.tenantId, modelVersionId: input.modelVersionId, status: status ?? 'unchanged' })
    },
  }
}
