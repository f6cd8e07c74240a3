// The only SQL that writes edge_packages and edge_package_runs.
import type { Db } from '../platform/db'
import { CURSOR_AT, newestFirstAfter, type CreatedCursor } from '../platform/keyset'
import type { RunReport, WireProtocol } from './manifest'
import type { TargetArch } from './image-lines'
import { projectReachClause, type Reach } from '../project-members/queries'

export type PackageStatus = 'queued' | 'building' | 'ready' | 'failed'

export interface PackageRequest {
  mode: 'local' | 'remote_ws'
  strategyKey: string | null
  remotePolicyHost: string | null
  remotePolicyPort: number | null
  steps: number
  targetArch: TargetArch
  wireProtocols: WireProtocol[]
  useFakeTransport: boolean
}

export interface PackageRow {
  id: string
  tenant_id: string
  model_version_id: string
  embodiment_profile_id: string
  mode: 'local' | 'remote_ws'
  strategy_key: string | null
  remote_policy_host: string | null
  remote_policy_port: number | null
  steps: number
  target_arch: TargetArch
  wire_protocols: WireProtocol[]
  use_fake_transport: boolean
  status: PackageStatus
  failure_reason: string | null
  progress_bytes: number
  total_bytes: number | null
  artifact_bucket: string | null
  artifact_key: string | null
  size_bytes: number | null
  sha256: string | null
  workflow_id: string
  project_id: string | null
  created_at: Date
  updated_at: Date
  cursor_at: string
}

const COLUMNS = `id, tenant_id, model_version_id, embodiment_profile_id, mode, strategy_key, remote_policy_host, remote_policy_port,
  steps, target_arch, wire_protocols, use_fake_transport, status, failure_reason, progress_bytes, total_bytes, artifact_bucket,
  artifact_key, size_bytes, sha256, workflow_id, project_id, created_at, updated_at, ${CURSOR_AT}`

export async function insertPackage(
  db: Db,
  p: {
    id: string
    tenantId: string
    projectId: string | null
    modelVersionId: string
    embodimentProfileId: string
    workflowId: string
    request: PackageRequest
  },
) {
  const r = p.request
  const [row] = await db<PackageRow[]>`
    insert into edge_packages (id, tenant_id, project_id, model_version_id, embodiment_profile_id, mode, strategy_key, remote_policy_host,
                               remote_policy_port, steps, target_arch, wire_protocols, use_fake_transport, workflow_id)
    values (${p.id}, ${p.tenantId}, ${p.projectId}, ${p.modelVersionId}, ${p.embodimentProfileId}, ${r.mode}, ${r.strategyKey},
            ${r.remotePolicyHost}, ${r.remotePolicyPort}, ${r.steps}, ${r.targetArch}, ${r.wireProtocols}::text[], ${r.useFakeTransport},
            ${p.workflowId})
    returning ${db.unsafe(COLUMNS)}`
  return row!
}

export async function findPackage(db: Db, tenantId: string, id: string): Promise<PackageRow | undefined> {
  const [row] = await db<PackageRow[]>`select ${db.unsafe(COLUMNS)} from edge_packages where tenant_id = ${tenantId} and id = ${id}`
  return row
}

export function listPackages(
  db: Db,
  tenantId: string,
  reach: Reach,
  f: { modelVersionId?: string; status?: PackageStatus },
  after: CreatedCursor | null,
  limit: number,
) {
  return db<PackageRow[]>`
    select ${db.unsafe(COLUMNS)} from edge_packages
     where tenant_id = ${tenantId} ${projectReachClause(db, reach)}
       and (${f.modelVersionId ?? null}::uuid is null or model_version_id = ${f.modelVersionId ?? null}::uuid)
       and (${f.status ?? null}::text is null or status = ${f.status ?? null}) ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`
}

/** queued → building, and building → building for a retried activity; anything else is not this build's to touch. */
export async function markBuilding(db: Db, tenantId: string, id: string, totalBytes: number): Promise<PackageRow | undefined> {
  const [row] = await db<PackageRow[]>`
    update edge_packages set status = 'building', total_bytes = ${totalBytes}, progress_bytes = 0, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'building')
    returning ${db.unsafe(COLUMNS)}`
  return row
}

export const recordProgress = (db: Db, tenantId: string, id: string, bytesDone: number) =>
  db`update edge_packages set progress_bytes = ${bytesDone}, updated_at = now() where tenant_id = ${tenantId} and id = ${id} and status = 'building'`

export async function markReady(db: Db, tenantId: string, id: string, a: { bucket: string; key: string; sizeBytes: number; sha256: string }) {
  const [row] = await db<PackageRow[]>`
    update edge_packages set status = 'ready', artifact_bucket = ${a.bucket}, artifact_key = ${a.key}, size_bytes = ${a.sizeBytes},
           sha256 = ${a.sha256}, progress_bytes = coalesce(total_bytes, 0), updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'building')
    returning ${db.unsafe(COLUMNS)}`
  return row
}

export async function markFailed(db: Db, tenantId: string, id: string, reason: string) {
  const [row] = await db<PackageRow[]>`
    update edge_packages set status = 'failed', failure_reason = ${reason.slice(0, 1000)}, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'building')
    returning ${db.unsafe(COLUMNS)}`
  return row
}

export interface RunRow {
  id: string
  package_id: string
  steps_done: number
  latency_p50_ms: number | null
  latency_p99_ms: number | null
  contract_violations: number
  inferences: number | null
  underruns: number | null
  queue_depth_max: number | null
  queue_depth_mean: number | null
  loop_jitter_p99_ms: number | null
  exit_reason: string
  violations: RunReport['violations']
  started_at: Date
  finished_at: Date
  reported_by: string
  created_at: Date
  cursor_at: string
}

const RUN_COLUMNS = `id, package_id, steps_done, latency_p50_ms, latency_p99_ms, contract_violations, inferences, underruns,
  queue_depth_max, queue_depth_mean, loop_jitter_p99_ms, exit_reason, violations, started_at, finished_at, reported_by, created_at, ${CURSOR_AT}`

export async function insertRun(db: Db, tenantId: string, packageId: string, reportedBy: string, r: RunReport) {
  const [row] = await db<RunRow[]>`
    insert into edge_package_runs (tenant_id, package_id, steps_done, latency_p50_ms, latency_p99_ms, contract_violations, inferences,
                                   underruns, queue_depth_max, queue_depth_mean, loop_jitter_p99_ms, exit_reason, violations,
                                   started_at, finished_at, reported_by)
    values (${tenantId}, ${packageId}, ${r.stepsDone}, ${r.latencyMs?.p50 ?? null}, ${r.latencyMs?.p99 ?? null}, ${r.contractViolations},
            ${r.inferences ?? null}, ${r.underruns ?? null}, ${r.queueDepth?.max ?? null}, ${r.queueDepth?.mean ?? null},
            ${r.loopJitterMs?.p99 ?? null}, ${r.exitReason}, ${db.json(r.violations as never)}, ${r.startedAt}, ${r.finishedAt}, ${reportedBy})
    returning ${db.unsafe(RUN_COLUMNS)}`
  return row!
}

export const listRuns = (db: Db, tenantId: string, packageId: string, after: CreatedCursor | null, limit: number) =>
  db<RunRow[]>`
    select ${db.unsafe(RUN_COLUMNS)} from edge_package_runs
     where tenant_id = ${tenantId} and package_id = ${packageId} ${newestFirstAfter(db, after)}
     order by created_at desc, id desc
     limit ${limit}`

/** The tenant's model versions whose packages a robot reported a run of within the last `days` days, most recent
 *  first (offboarding's lineage rule, api/offboarding/service.ts). */
export async function modelVersionsRunWithin(db: Db, tenantId: string, days: number): Promise<{ model_version_id: string; last_run_at: Date }[]> {
  return db<{ model_version_id: string; last_run_at: Date }[]>`
    select p.model_version_id, max(r.created_at) as last_run_at
      from edge_package_runs r
      join edge_packages p on p.id = r.package_id and p.tenant_id = r.tenant_id
     where r.tenant_id = ${tenantId} and r.created_at > now() - make_interval(days => ${days})
     group by p.model_version_id
     order by last_run_at desc
     limit 20`
}
